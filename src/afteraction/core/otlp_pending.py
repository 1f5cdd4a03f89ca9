"""Spans whose run cannot be placed yet, for runs that arrive over several exports.

A batching exporter sends a span when it ends, so a long run reaches the collector in pieces: tool
and model spans first, the spans above them (an OpenInference ``turn``, a LangGraph task, the agent
span itself) in a later export. The mapping needs a span's ancestry to know its session, its task
and its outcome, so a span is mapped only once its ancestry is known:

- a span is **ready** when the walk up its parents, through the spans known so far, ends at a root
  of its trace: a span with no parent, or whose parent ran in another process (its flags say
  ``parent is remote``), or a cycle (a malformed trace no later export can complete);
- otherwise it **waits**: the walk ends at a parent not received yet. The service keeps waiting
  spans in the store (``afteraction.store.spans``), and places them when the export that brings
  their ancestors arrives, or resolves them as they are when bounds are passed (``resolve``).

This module is pure: the ready/waiting split (``split``), and one serializer each way for a span
(``dumps``/``loads``), which is what the store keeps (scrubbed of secrets, as the events will be).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from afteraction.core.otlp_spans import Span, SpanEvent
from afteraction.core.sanitize import Limits, sanitize, scrub_text

__all__ = ["Split", "dumps", "loads", "split"]

_Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Split:
    """Spans that can be mapped now, and spans that wait for their ancestors."""

    ready: tuple[Span, ...]
    waiting: tuple[Span, ...]


def _key(span: Span) -> _Key:
    return (span.trace_id, span.span_id)


def split(spans: Iterable[Span], *, as_they_are: Collection[str] = ()) -> Split:
    """The spans (one per trace and span id, the first given wins) split into ready and waiting;
    every span of a trace in ``as_they_are`` is ready (its bounds were passed: it is mapped with
    what is known). Each span is walked once; the walk is iterative and cycle-safe."""
    by_key: dict[_Key, Span] = {}
    for span in spans:
        by_key.setdefault(_key(span), span)
    ready: dict[_Key, bool] = {}
    for start in by_key.values():
        path: list[Span] = []
        on_path: set[_Key] = set()
        current: Span | None = start
        outcome = False
        while current is not None:
            key = _key(current)
            if key in ready:
                outcome = ready[key]
                break
            if key in on_path or current.parent_id is None or current.parent_remote:
                outcome = True  # a root, a remote parent, or a cycle
                break
            if current.trace_id in as_they_are:
                outcome = True
                break
            path.append(current)
            on_path.add(key)
            current = by_key.get((current.trace_id, current.parent_id))
        if current is None:
            outcome = False  # the walk left the known spans: a parent not received yet
        for span in path:
            ready[_key(span)] = outcome
        ready.setdefault(_key(start), outcome)
    return Split(
        ready=tuple(span for key, span in by_key.items() if ready[key]),
        waiting=tuple(span for key, span in by_key.items() if not ready[key]),
    )


def dumps(span: Span) -> str:
    """A span as compact JSON: what the store keeps of a waiting span. Its texts and attributes
    are scrubbed first, as the events mapped from it will be (secrets are never stored, not even
    while a span waits; a secret-named attribute is ``[REDACTED]``), but not cut: the mapping
    reads the span whole when its ancestors arrive."""
    data: dict[str, Any] = {
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_id": span.parent_id,
        "name": scrub_text(span.name),
        "kind": span.kind,
        "start_ns": span.start_ns,
        "end_ns": span.end_ns,
        "status": span.status,
        "status_message": scrub_text(span.status_message),
        "attributes": _scrubbed(span.attributes),
        "events": [
            {"name": scrub_text(e.name), "time_ns": e.time_ns, "attributes": _scrubbed(e.attributes)}
            for e in span.events
        ],
        "resource": _scrubbed(span.resource),
        "scope": scrub_text(span.scope),
        "parent_remote": span.parent_remote,
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


# No size bound: an attribute is kept whole (a span's size is bounded by the request's).
_UNCUT = Limits(max_depth=64, max_fields=1 << 30, max_items=1 << 30, max_string=1 << 30)


def _scrubbed(attributes: Mapping[str, Any]) -> dict[str, Any]:
    cleaned: dict[str, Any] = sanitize(dict(attributes), field="attributes", limits=_UNCUT)
    return cleaned


def loads(text: str) -> Span:
    """The span ``dumps`` wrote."""
    data: Mapping[str, Any] = json.loads(text)
    return Span(
        trace_id=data["trace_id"],
        span_id=data["span_id"],
        parent_id=data["parent_id"],
        name=data["name"],
        kind=data["kind"],
        start_ns=data["start_ns"],
        end_ns=data["end_ns"],
        status=data["status"],
        status_message=data["status_message"],
        attributes=data["attributes"],
        events=tuple(SpanEvent(e["name"], e["time_ns"], e["attributes"]) for e in data["events"]),
        resource=data["resource"],
        scope=data["scope"],
        parent_remote=data["parent_remote"],
    )
