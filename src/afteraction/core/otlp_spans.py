"""OTLP trace data decoded into plain spans: ``decode_traces`` reads an ``ExportTraceServiceRequest``
given as JSON data (already parsed) into ``Span`` records.

Both JSON forms that reach a collector are read:

- OTLP/JSON, as OTLP/HTTP exporters send it: trace and span ids in **hex**, enums as integers;
- the protobuf JSON mapping (``MessageToJson``/``MessageToDict``, which is also how the server turns a
  protobuf body into this shape): ids in **base64**, enums as names.

The two id encodings differ in length (a trace id is 32 hex or 24 base64 characters, a span id 16 or 12),
so each id is read by its length, never guessed. int64 values may be strings or numbers, field names
lowerCamelCase or snake_case. ``AnyValue`` unions become plain values (str, bool, int, float, list, dict).

A body whose structure is wrong (not an object, ``resourceSpans`` not a list…) raises ``ValidationError``
naming the field. One span that cannot be read (a bad id, a time out of range) is *rejected* and counted,
and the rest of the request is still read, as OTLP's partial success asks.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from afteraction.core.redact import scrub_text
from afteraction.errors import ValidationError
from afteraction.model._check import echoed

__all__ = ["Batch", "Span", "SpanEvent", "decode_traces"]

STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2
_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
_KIND_NAMES = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
_MAX_NANOS = 253_402_300_799_999_999_999  # 9999-12-31T23:59:59.999999999Z
_MAX_DEPTH = 16  # nesting of array/kvlist attribute values
_INT64 = 1 << 63
_MAX_ERRORS = 5  # rejection messages kept per request
_HAS_IS_REMOTE, _IS_REMOTE = 0x100, 0x200  # SpanFlags: whether the parent's remoteness is known, and is remote


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """An event recorded on a span (``exception`` is the one the mapping reads)."""

    name: str
    time_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Span:
    """One span, ids in lowercase hex, times in Unix nanoseconds, attributes as plain values."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status: int
    status_message: str
    attributes: Mapping[str, Any]
    events: tuple[SpanEvent, ...] = ()
    resource: Mapping[str, Any] = field(default_factory=dict)
    scope: str = ""
    parent_remote: bool = False  # the parent ran in another process (span flags say so)


@dataclass(frozen=True, slots=True)
class Batch:
    """The spans read from one request, and how many were rejected (with the first reasons)."""

    spans: tuple[Span, ...]
    rejected: int = 0
    errors: tuple[str, ...] = ()


class _Reject(Exception):
    """One span cannot be read: counted, the request goes on."""


def _get(data: Mapping[str, Any], camel: str, snake: str) -> Any:
    value = data.get(camel)
    return data.get(snake) if value is None else value


def _object(value: object, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(where, f"must be an object, got {type(value).__name__}")
    return value


def _list(value: object, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(where, f"must be a list, got {type(value).__name__}")
    return value


def decode_traces(data: object) -> Batch:
    """The spans of an ``ExportTraceServiceRequest`` in JSON form; see the module docstring."""
    body = _object(data, "body") if data is not None else None
    if body is None:
        raise ValidationError("body", "must be an ExportTraceServiceRequest object, got null")
    spans: list[Span] = []
    rejected = 0
    errors: list[str] = []
    for r, item in enumerate(_list(_get(body, "resourceSpans", "resource_spans"), "resourceSpans")):
        where = f"resourceSpans[{r}]"
        resource_spans = _object(item, where)
        resource = _attributes(_object(resource_spans.get("resource"), f"{where}.resource").get("attributes"))
        scopes = _list(_get(resource_spans, "scopeSpans", "scope_spans"), f"{where}.scopeSpans")
        for s, scope_item in enumerate(scopes):
            scope_where = f"{where}.scopeSpans[{s}]"
            scope_spans = _object(scope_item, scope_where)
            scope = _object(scope_spans.get("scope"), f"{scope_where}.scope").get("name")
            for n, raw in enumerate(_list(scope_spans.get("spans"), f"{scope_where}.spans")):
                try:
                    spans.append(_span(raw, resource, scope if isinstance(scope, str) else ""))
                except _Reject as exc:
                    rejected += 1
                    if len(errors) < _MAX_ERRORS:
                        errors.append(f"{scope_where}.spans[{n}]: {exc}")
    return Batch(tuple(spans), rejected, tuple(errors))


def _span(raw: object, resource: Mapping[str, Any], scope: str) -> Span:
    if not isinstance(raw, Mapping):
        raise _Reject(f"a span must be an object, got {type(raw).__name__}")
    trace_id = _id(_get(raw, "traceId", "trace_id"), 16, "traceId")
    span_id = _id(_get(raw, "spanId", "span_id"), 8, "spanId")
    parent = _get(raw, "parentSpanId", "parent_span_id")
    parent_id = None if parent in (None, "") else _id(parent, 8, "parentSpanId")
    if trace_id is None or span_id is None:
        raise _Reject("traceId and spanId are required and must not be all zeros")
    start = _nanos(_get(raw, "startTimeUnixNano", "start_time_unix_nano"), "startTimeUnixNano")
    end = _nanos(_get(raw, "endTimeUnixNano", "end_time_unix_nano"), "endTimeUnixNano")
    status = raw.get("status")
    status = status if isinstance(status, Mapping) else {}
    message = status.get("message")
    name = raw.get("name")
    try:
        attributes = _attributes(raw.get("attributes"))
        events = tuple(_event(item) for item in _list(raw.get("events"), "events"))
    except ValidationError as exc:
        raise _Reject(str(exc)) from None
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=parent_id,
        name=name if isinstance(name, str) else "",
        kind=_enum(raw.get("kind"), _KIND_NAMES),
        start_ns=start,
        end_ns=max(end, start),
        status=_enum(status.get("code"), _STATUS_NAMES),
        status_message=message if isinstance(message, str) else "",
        attributes=attributes,
        events=events,
        resource=resource,
        scope=scope,
        parent_remote=parent_id is not None and _remote(_get(raw, "flags", "flags")),
    )


def _remote(flags: object) -> bool:
    number = _integer(flags)
    return number is not None and number & (_HAS_IS_REMOTE | _IS_REMOTE) == _HAS_IS_REMOTE | _IS_REMOTE


def _id(value: object, size: int, where: str) -> str | None:
    """An id as lowercase hex: given in hex (2×size characters) or base64 (the protobuf JSON mapping)."""
    if value is None:
        raise _Reject(f"{where} is required")
    if not isinstance(value, str):
        raise _Reject(f"{where} must be a string of hex digits, got {type(value).__name__}")
    if len(value) == 2 * size:
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raise _Reject(f"{where} must be {2 * size} hex digits, got {scrub_text(echoed(value))!r}") from None
    else:
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != size:
            raise _Reject(f"{where} must be {2 * size} hex digits, got {scrub_text(echoed(value))!r}")
    return None if not any(raw) else raw.hex()


def _nanos(value: object, where: str) -> int:
    number = _integer(value)
    if number is None or not 0 <= number <= _MAX_NANOS:
        got = scrub_text(echoed(repr(value)))
        raise _Reject(f"{where} must be Unix nanoseconds (a non-negative integer, up to year 9999), got {got}")
    return number


def _integer(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and 0 < len(value) <= 20 and value.lstrip("-").isascii() and value.lstrip("-").isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _enum(value: object, names: Mapping[str, int]) -> int:
    if isinstance(value, str):
        return names.get(value, 0)
    number = _integer(value)
    return number if number is not None and 0 <= number < 64 else 0


def _attributes(value: object, depth: int = 0) -> dict[str, Any]:
    """A ``KeyValue`` list as a dict; a later duplicate key wins, entries without a string key are skipped."""
    out: dict[str, Any] = {}
    for item in _list(value, "attributes"):
        if isinstance(item, Mapping) and isinstance(item.get("key"), str):
            out[item["key"]] = _any(item.get("value"), depth)
    return out


def _any(value: object, depth: int) -> Any:
    """An ``AnyValue`` as a plain value (an unknown or empty one is None)."""
    if not isinstance(value, Mapping):
        return None
    if depth >= _MAX_DEPTH:
        raise ValidationError("attributes", f"values are nested more than {_MAX_DEPTH} deep")
    for key, read in _READERS:
        if key[0] in value or key[1] in value:
            return read(_get(value, *key), depth + 1)
    return None


def _string(value: object, depth: int) -> Any:
    return value if isinstance(value, str) else None


def _bool(value: object, depth: int) -> Any:
    return value if isinstance(value, bool) else None


def _int(value: object, depth: int) -> Any:
    number = _integer(value)
    return number if number is not None and -_INT64 <= number < _INT64 else None


def _double(value: object, depth: int) -> Any:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
        return number if math.isfinite(number) else None
    return None  # "NaN", "Infinity": JSON has no such numbers


def _bytes(value: object, depth: int) -> Any:
    return value if isinstance(value, str) else None  # kept as its base64 text


def _array(value: object, depth: int) -> Any:
    items = value.get("values") if isinstance(value, Mapping) else None
    return [_any(item, depth) for item in items] if isinstance(items, list) else []


def _kvlist(value: object, depth: int) -> Any:
    items = value.get("values") if isinstance(value, Mapping) else None
    return _attributes(items, depth) if isinstance(items, list) else {}


_READERS = (
    (("stringValue", "string_value"), _string),
    (("boolValue", "bool_value"), _bool),
    (("intValue", "int_value"), _int),
    (("doubleValue", "double_value"), _double),
    (("arrayValue", "array_value"), _array),
    (("kvlistValue", "kvlist_value"), _kvlist),
    (("bytesValue", "bytes_value"), _bytes),
)


def _event(raw: object) -> SpanEvent:
    if not isinstance(raw, Mapping):
        raise ValidationError("events", f"each event must be an object, got {type(raw).__name__}")
    name = raw.get("name")
    time = _integer(_get(raw, "timeUnixNano", "time_unix_nano"))
    return SpanEvent(
        name=name if isinstance(name, str) else "",
        time_ns=time if time is not None and 0 <= time <= _MAX_NANOS else 0,
        attributes=_attributes(raw.get("attributes")),
    )
