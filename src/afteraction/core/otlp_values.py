"""Reading the values GenAI spans carry: content attributes that arrive as JSON text (or a Python
``repr``), frameworks' wrappings around tool arguments and results, and a span's error as
``(type, message)``.

Every reader is total: a value it cannot read gives ``None`` (or an empty result), never an exception.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from typing import Any

from afteraction.core.otlp_spans import STATUS_ERROR, Span

__all__ = ["envelope_call_id", "error_of", "is_schema", "loads", "unwrap"]

_MAX_PARSE = 1 << 20  # characters: content past this is kept as text, not parsed
_MAX_LITERAL = 16_384  # Python literals are parsed only when this short (ast is slower than json)
_SCHEMA_KEYS = frozenset(
    "properties required title type additionalProperties description $defs $schema definitions".split()
)
_OTHER = "_OTHER"


def loads(value: object) -> Any:
    """A JSON (or Python-literal) text decoded; any other value as it is; undecodable text as the text."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text or text[0] not in '[{"' or len(text) > _MAX_PARSE:
        return value
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    if len(text) <= _MAX_LITERAL:
        try:  # a Python repr; made JSON data (sets, bytes and other non-JSON values leave it as text)
            return json.loads(json.dumps(ast.literal_eval(text), allow_nan=False))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError, OverflowError):
            pass
    return value


def is_schema(value: object) -> bool:
    """A JSON Schema of an object rather than values (some instrumentations put the tool's parameter
    schema where the call's arguments belong)."""
    return (
        isinstance(value, Mapping)
        and "properties" in value
        and value.get("type") == "object"
        and all(key in _SCHEMA_KEYS for key in value)
    )


def unwrap(value: Any) -> Any:
    """Content with a framework's wrapping taken off: a LangChain callback envelope
    (``{"input_str": …, "tags", "metadata"}``) gives its input; a serialized LangChain message
    (``{"lc": 1, "kwargs": {"content": …}}``, maybe under ``"output"``) gives its content."""
    for _ in range(3):
        if not isinstance(value, Mapping):
            return value
        if isinstance(value.get("input_str"), str) and ("tags" in value or "metadata" in value):
            value = value["inputs"] if isinstance(value.get("inputs"), Mapping) else loads(value["input_str"])
        elif ("output" in value or "outputs" in value) and set(value) <= {"output", "outputs", "kwargs"}:
            value = value.get("output", value.get("outputs"))
        elif value.get("lc") == 1 and isinstance(value.get("kwargs"), Mapping) and "content" in value["kwargs"]:
            value = loads(value["kwargs"]["content"])
        elif value.get("type") == "tool" and "content" in value and "tool_call_id" in value:
            value = loads(value["content"])  # a LangChain ToolMessage as JSON
        else:
            return value
    return value


def envelope_call_id(value: Any) -> str | None:
    """The tool call id a LangChain wrapping carries (a callback envelope's ``kwargs.tool_call_id``, a
    ToolMessage's ``tool_call_id``)."""
    if not isinstance(value, Mapping):
        return None
    kwargs = value.get("kwargs")
    found = kwargs.get("tool_call_id") if isinstance(kwargs, Mapping) else value.get("tool_call_id")
    if found is None and isinstance(value.get("output"), Mapping):
        return envelope_call_id(value["output"])
    return found if isinstance(found, str) and found.strip() else None


def _status_message(text: str) -> str:
    """A status message; one that is the ``repr`` of ``{'message': …, 'data': {'error': …}}`` is read."""
    head, brace, tail = text.partition("{")
    found = loads(brace + tail) if brace and len(head) <= 200 else None
    if not isinstance(found, Mapping):
        return text
    data = found.get("data")
    detail = found.get("error", data.get("error") if isinstance(data, Mapping) else None)
    lead = found.get("message") if isinstance(found.get("message"), str) else head.strip().rstrip(":").strip()
    if isinstance(detail, str) and detail.strip():
        return f"{lead}: {detail}" if lead else detail
    return lead or text


def error_of(span: Span) -> tuple[str | None, str] | None:
    """``(error type, message)`` when the span failed (status ERROR, or an ``error.type``), else None.

    The type is ``error.type`` unless that is ``_OTHER``, then the ``exception`` event's type; the message
    is the exception's message, else the status message. Stack traces are not kept (they hold the paths
    of the machine that ran the agent)."""
    error_type = span.attributes.get("error.type")
    if span.status != STATUS_ERROR and not (isinstance(error_type, str) and error_type):
        return None
    exception = next((e.attributes for e in span.events if e.name == "exception"), {})
    kind = error_type if isinstance(error_type, str) and error_type and error_type != _OTHER else None
    if kind is None and isinstance(exception.get("exception.type"), str):
        kind = exception["exception.type"] or None
    message = exception.get("exception.message")
    if not (isinstance(message, str) and message.strip()):
        message = _status_message(span.status_message) if span.status_message.strip() else ""
    if not message:
        message = kind or _OTHER
    return kind, message
