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
(``dumps``/``loads``), which is what the store keeps: the span reduced to what the mapping reads of
it (``kept``), scrubbed of secrets as the events will be.

What the mapping reads, and so what ``kept`` keeps: of the message attributes (the conventions'
``gen_ai.input.messages`` / ``gen_ai.output.messages``, pydantic-ai's, ADK's, OpenInference's and
OpenLLMetry's flattened ones: ``otlp_messages``) only the task (the last user message), the output
text and the tool calls a model asked for, however many messages a conversation holds; of the span
events only the first ``exception``'s type and message; of the resource only ``service.name``. Every
other attribute, the name and the status are kept whole: the mapping parses JSON attributes whole,
takes a task or an output from anywhere in them, folds whitespace before it cuts a name, and a cut
string keeps a marker counting what was cut (``…[cut N chars]``), so a value cut while held would give
other events. Their size is bounded by the buffer's bytes per tenant (``store.spans``) instead.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from afteraction.core.otlp_messages import input_messages, model_tool_calls, output_messages, task_text, text_of_output
from afteraction.core.otlp_spans import Span, SpanEvent
from afteraction.core.otlp_values import error_of
from afteraction.core.sanitize import Limits, sanitize, scrub_text

__all__ = ["Split", "dumps", "kept", "loads", "split"]

_Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Split:
    """Spans that can be mapped now, and spans that wait for their ancestors."""

    ready: tuple[Span, ...]
    waiting: tuple[Span, ...]


def _key(span: Span) -> _Key:
    return (span.trace_id, span.span_id)


def split(
    spans: Iterable[Span], *, as_they_are: Collection[str] = (), under: Collection[tuple[str, str]] = ()
) -> Split:
    """The spans (one per trace and span id, the first given wins) split into ready and waiting;
    every span of a trace in ``as_they_are`` is ready (its bounds were passed: it is mapped with
    what is known), and so is a span whose walk up leaves the given spans at a (trace id, span id)
    of ``under`` (a parent stored already: it joins that parent's session). Each span is walked
    once; the walk is iterative and cycle-safe."""
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
            parent = (current.trace_id, current.parent_id)
            current = by_key.get(parent)
            if current is None:  # the walk left the known spans: ready at a parent stored already, else waiting
                outcome = parent in under
        for span in path:
            ready[_key(span)] = outcome
        ready.setdefault(_key(start), outcome)
    return Split(
        ready=tuple(span for key, span in by_key.items() if ready[key]),
        waiting=tuple(span for key, span in by_key.items() if not ready[key]),
    )


_EXCEPTION = ("exception.type", "exception.message")  # what ``error_of`` reads of an ``exception`` event
_NO_MESSAGE: dict[str, Any] = {"role": None, "parts": []}  # what a flattened attribute the readers do not take gives


def _readings(span: Span) -> tuple[Any, ...]:
    """What the mapping reads of a span's messages, span events and resource."""
    service = span.resource.get("service.name")
    return (task_text(span), text_of_output(span), model_tool_calls(span), error_of(span), service)


def _message_attribute(key: str, value: Any) -> bool:
    """Whether the message readers take this attribute: a list of messages under its name, or a
    flattened message's role, text or tool call (with a string value for the first two)."""
    text = isinstance(value, str)
    return _message_name(key, text) if len(key) <= _CACHED_NAME else _taken(key, text)


def _taken(key: str, text: bool) -> bool:
    """``_message_attribute`` for a name, asked of the readers themselves on an attribute of that
    name alone."""

    def taken(value: Any) -> bool:
        alone = Span("", "", None, "", 0, 0, 0, 0, "", {key: value})
        return any(dict(m) != _NO_MESSAGE for m in (*input_messages(alone), *output_messages(alone)))

    return taken([{"role": "user"}]) or taken("x" if text else 0)


_CACHED_NAME = 256  # names repeat, so they are asked once; a longer one (sent to fill the cache) each time
_message_name = lru_cache(maxsize=4096)(_taken)


def kept(span: Span) -> Span:
    """The span as the buffer keeps it (see the module docstring): its message attributes replaced
    by one input message (the task) and one output message (the output text and the tool calls),
    its span events by the first ``exception`` (type and message), its resource by ``service.name``.
    The span is kept whole when the result would read otherwise (``_readings``): a reduction never
    changes the events the span is mapped to."""
    before = _readings(span)
    task, output, calls = before[:3]
    attributes = {k: v for k, v in span.attributes.items() if not _message_attribute(k, v)}
    if task is not None:
        attributes["gen_ai.input.messages"] = [{"role": "user", "parts": [{"type": "text", "content": task}]}]
    parts: list[dict[str, Any]] = [{"type": "text", "content": output}] if output is not None else []
    parts += [{"type": "tool_call", "name": name, "id": call, "arguments": args} for name, call, args in calls]
    if parts:
        attributes["gen_ai.output.messages"] = [{"role": "assistant", "parts": parts}]
    exception = next((e for e in span.events if e.name == "exception"), None)
    events = () if exception is None else (_exception(exception),)
    resource = {key: value for key, value in span.resource.items() if key == "service.name"}
    reduced = replace(span, attributes=attributes, events=events, resource=resource)
    return reduced if _readings(reduced) == before else span


def _exception(event: SpanEvent) -> SpanEvent:
    return SpanEvent(event.name, event.time_ns, {k: event.attributes[k] for k in _EXCEPTION if k in event.attributes})


def dumps(span: Span) -> str:
    """A span as compact JSON: what the store keeps of a waiting span, ``kept``. Its texts and
    attributes are scrubbed first, as the events mapped from it will be (secrets are never stored,
    not even while a span waits; a secret-named attribute is ``[REDACTED]``), but not cut (see the
    module docstring)."""
    span = kept(span)
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


# No size bound: what ``kept`` keeps is kept whole (a span's size is bounded by the request's, the
# buffer's by its bytes per tenant). Scrubbing it whole is bounded by the request's size too: ``scrub_text``
# costs time in proportion to its text (``benchmarks/bench_scrub.py``): 0.1 to 0.5 s for a 1 MiB attribute
# of each shape that once cost the square of its length (``sk-``, ``curl -u``, ``}"kty":`` repeated…), as
# for ordinary text. Text made of nothing but short ``name=value`` secrets costs more, 2 to 6 s a MiB, for
# each secret found (``pw=x&`` repeated: 200,000 of them); cutting it into windows would cost the same.
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
