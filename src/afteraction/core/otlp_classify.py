"""What a span is, for afteraction: an agent or workflow invocation (a session), a tool call, a model
call, a handoff, or nothing it maps (skipped).

``gen_ai.operation.name`` decides first. Without it, OpenInference's ``openinference.span.kind`` and
Traceloop's ``traceloop.span.kind``, then the presence of ``gen_ai.tool.name`` / ``gen_ai.request.model`` /
``gen_ai.agent.name``. Span names are read only for names (``invoke_agent X`` → ``X``) and for the one
shape that has no other mark: OpenInference records an OpenAI Agents handoff as an ``execute_tool`` span
without a tool name, named ``handoff to <agent>``.
"""

from __future__ import annotations

import re
from typing import Literal

from afteraction.core.otlp_spans import Span
from afteraction.core.redact import scrub_text

__all__ = ["Role", "agent_name", "classify", "tool_name"]

Role = Literal["agent", "workflow", "tool", "model", "handoff"]

_OPERATIONS: dict[str, Role] = {
    "invoke_agent": "agent",
    "invoke_workflow": "workflow",
    "execute_tool": "tool",
    "handoff": "handoff",
    "chat": "model",
    "text_completion": "model",
    "generate_content": "model",
    "chat.completions": "model",  # Semantic Kernel before the conventions settled
    "text.completions": "model",
}
_OPENINFERENCE: dict[str, Role] = {"AGENT": "agent", "TOOL": "tool", "LLM": "model"}
_TRACELOOP: dict[str, Role] = {"agent": "agent", "workflow": "workflow", "tool": "tool"}
_PREFIX = re.compile(r"^(invoke_agent|invoke_workflow|execute_tool|create_agent|handoff|chat)\s+", re.IGNORECASE)
_HANDOFF = re.compile(r"^handoff\b", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_MAX_NAME = 200
_AGENT_NAMES = ("gen_ai.agent.name", "agent.name", "agent_name", "gen_ai.workflow.name", "traceloop.entity.name")


def _text(span: Span, *keys: str) -> str | None:
    for key in keys:
        value = span.attributes.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def classify(span: Span) -> Role | None:
    """The span's role, or None for spans the mapping skips (tasks, chains, embeddings, create_agent…)."""
    operation = _text(span, "gen_ai.operation.name")
    if operation is not None:
        role = _OPERATIONS.get(operation.lower())
        if role == "tool" and _text(span, "gen_ai.tool.name", "tool.name") is None and _HANDOFF.match(span.name):
            return "handoff"
        return role
    for key, table in (("openinference.span.kind", _OPENINFERENCE), ("traceloop.span.kind", _TRACELOOP)):
        kind = _text(span, key)
        if kind is not None:
            return table.get(kind.upper() if table is _OPENINFERENCE else kind.lower())
    if _text(span, "gen_ai.tool.name") is not None:
        return "tool"
    if _text(span, "gen_ai.request.model", "gen_ai.response.model") is not None:
        return "model"
    if _text(span, "gen_ai.agent.name", "agent_name") is not None:
        return "agent"
    return None


def _clean(name: str) -> str:
    """A name as events carry it (a session's source and subject, a payload's agent or tool): control
    characters and runs of space made one space, then secrets scrubbed (a value on the line below its
    name is on the same line by then), bounded."""
    return scrub_text(" ".join(_CONTROL.sub(" ", name).split()))[:_MAX_NAME].strip()


def _from_span_name(span: Span) -> str:
    return _clean(_PREFIX.sub("", span.name.strip())) or _clean(span.name)


def agent_name(span: Span) -> str:
    """The agent's (or workflow's) name: its attributes first, then the span name without the operation."""
    found = _text(span, *_AGENT_NAMES)
    return _clean(found) if found else (_from_span_name(span) or "agent")


def tool_name(span: Span) -> str:
    found = _text(span, "gen_ai.tool.name", "tool.name", "tool_name", "traceloop.entity.name")
    return _clean(found) if found else (_from_span_name(span) or "tool")
