"""Chat messages on GenAI spans, whichever way an instrumentation records them, read into the GenAI
message schema (``{"role", "parts": [{"type": "text" | "tool_call", …}]}``):

- ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (the conventions; a JSON string on spans);
  ``pydantic_ai.all_messages`` for an agent's whole conversation;
- OpenInference's flattened ``llm.input_messages.<i>.message.role|content|tool_calls.<k>.tool_call…``;
- OpenLLMetry's older flattened ``gen_ai.prompt.<i>.role|content`` and ``gen_ai.completion.<i>…``.

From them: the task a span was given (its last user message), the text it answered, and the tool
calls a model asked for (name, call id, arguments), which fill in what tool spans leave out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from afteraction.core.otlp_spans import Span
from afteraction.core.otlp_values import loads

__all__ = ["ModelToolCall", "input_messages", "model_tool_calls", "output_messages", "task_text", "text_of_output"]

ModelToolCall = tuple[str, str | None, Any]  # (tool name, call id, arguments)

_FLAT = re.compile(
    r"^(llm\.input_messages|llm\.output_messages|gen_ai\.prompt|gen_ai\.completion)\.(\d{1,4})\.(?:message\.)?(.+)$"
)
_FLAT_CALL = re.compile(r"^tool_calls\.(\d{1,4})\.(?:tool_call\.)?(?:function\.)?(name|arguments|id)$")
_FLAT_CONTENT = re.compile(r"^contents\.(\d{1,4})\.message_content\.text$")
_INPUTS = ("gen_ai.input.messages", "pydantic_ai.all_messages", "all_messages_events", "gcp.vertex.agent.llm_request")
_FLAT_INPUTS = ("llm.input_messages", "gen_ai.prompt")
_FLAT_OUTPUTS = ("llm.output_messages", "gen_ai.completion")
_USER = frozenset({"user", "human"})


def _listed(value: object) -> list[Mapping[str, Any]]:
    found = loads(value)
    if isinstance(found, Mapping):  # one message, or a request holding them (``contents``, ``messages``)
        inner = found.get("contents", found.get("messages"))
        found = inner if isinstance(inner, list) else [found]
    return [m for m in found if isinstance(m, Mapping)] if isinstance(found, list) else []


def _flattened(span: Span, bases: tuple[str, ...]) -> list[Mapping[str, Any]]:
    """Messages from flattened ``<base>.<i>.…`` attributes, in index order."""
    messages: dict[tuple[str, int], dict[str, Any]] = {}
    for key, value in span.attributes.items():
        match = _FLAT.match(key)
        if match is None or match[1] not in bases:
            continue
        message = messages.setdefault((match[1], int(match[2])), {"parts": [], "calls": {}, "texts": {}})
        rest = match[3]
        if rest == "role" and isinstance(value, str):
            message["role"] = value
        elif rest == "content" and isinstance(value, str):
            message["texts"][-1] = value
        elif (content := _FLAT_CONTENT.match(rest)) is not None and isinstance(value, str):
            message["texts"][int(content[1])] = value
        elif (call := _FLAT_CALL.match(rest)) is not None:
            message["calls"].setdefault(int(call[1]), {"type": "tool_call"})[call[2]] = value
    out: list[Mapping[str, Any]] = []
    for _, message in sorted(messages.items()):
        texts = [{"type": "text", "content": t} for _, t in sorted(message["texts"].items())]
        calls = [c for _, c in sorted(message["calls"].items())]
        out.append({"role": message.get("role"), "parts": texts + calls})
    return out


def input_messages(span: Span) -> list[Mapping[str, Any]]:
    for key in _INPUTS:
        if found := _listed(span.attributes.get(key)):
            return found
    return _flattened(span, _FLAT_INPUTS)


def output_messages(span: Span) -> list[Mapping[str, Any]]:
    return _listed(span.attributes.get("gen_ai.output.messages")) or _flattened(span, _FLAT_OUTPUTS)


def _parts(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    parts = message.get("parts")
    if isinstance(parts, list):
        return [p for p in parts if isinstance(p, Mapping)]
    content = message.get("content")  # the older {"role", "content"} shape
    return [{"type": "text", "content": content}] if isinstance(content, str) else []


def _text(message: Mapping[str, Any]) -> str:
    texts = [
        p["content"] if p.get("type") == "text" else p.get("text")  # {"text": …}: Gemini's parts
        for p in _parts(message)
        if p.get("type") in ("text", None)
    ]
    return "\n".join(t for t in texts if isinstance(t, str) and t.strip())


def task_text(span: Span) -> str | None:
    """The last user message the span was given (the request the agent or model got)."""
    for message in reversed(input_messages(span)):
        role = message.get("role")
        if isinstance(role, str) and role.lower() in _USER and (text := _text(message)):
            return text
    return None


def text_of_output(span: Span) -> str | None:
    """The text the span answered with, if any."""
    joined = "\n".join(t for m in output_messages(span) if (t := _text(m)))
    return joined or None


def model_tool_calls(span: Span) -> list[ModelToolCall]:
    """The tool calls a model span asked for (``tool_call`` parts of its output), in order."""
    calls: list[ModelToolCall] = []
    for message in output_messages(span):
        for part in _parts(message):
            name = part.get("name")
            if part.get("type") == "tool_call" and isinstance(name, str) and name:
                call_id = part.get("id")
                calls.append((name, call_id if isinstance(call_id, str) and call_id else None, part.get("arguments")))
    return calls
