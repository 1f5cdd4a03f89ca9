"""OTLP GenAI spans → AEP events that ``core.assemble`` turns into runs: ``map_spans``.

Per session (see ``otlp_sessions``), in time order:

- ``task.created`` at the invocation's start: the agent (``agent``), the task (``task``: the last user
  message the agent or its first model call got, else a child session's, else the agent's name), the kind
  (``agent``/``workflow``), the conversation id, the model; ``parent_session_id`` links to the session it
  ran in, ``trace_id`` is the OTel trace id so a workflow's sessions group by trace.
- per tool call, ``tool.called`` at its start (``tool_name``, ``call_id``, ``arguments``) and at its end
  ``tool.result`` (``output``) or, when it failed, ``error.raised`` (``error_type``, ``error``);
- per model call, ``task.updated`` with ``model_call`` (model, provider, tokens, finish reasons), and an
  ``error.raised`` when it failed; per handoff, ``handoff.started`` / ``handoff.completed``;
- ``task.completed`` or ``task.failed`` (``error_type``, ``error``) at its end.

Spans that hang under a session stored by an earlier export (``placed``) go in it, with its source, role
and parent: the stored session's ``task.created`` and end are not made again.

A tool span without its call id or with unusable arguments (the parameter schema, a LangChain callback
envelope) takes them from the model call that asked for it: the ``tool_call`` parts of the session's
model outputs, matched by call id, else by tool name in order.

Event ids are derived from trace id, span id and the event's role, so a re-sent export dedups. Times are
the span's Unix nanoseconds in UTC (``…Z``). Payloads are sanitized as all captured content is (secrets
redacted, sizes cut): content attributes may hold anything the agent saw.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from afteraction.core.capture import clean_task
from afteraction.core.otlp_classify import tool_name
from afteraction.core.otlp_messages import ModelToolCall, model_tool_calls, text_of_output
from afteraction.core.otlp_sessions import Item, Placed, Session, sessions
from afteraction.core.otlp_spans import Span
from afteraction.core.otlp_values import envelope_call_id, error_of, is_schema, loads, unwrap
from afteraction.core.sanitize import LIMITS, Limits, sanitize, scrub_text
from afteraction.errors import ValidationError
from afteraction.model import Event
from afteraction.model.event import AgentRole

__all__ = ["Mapped", "map_spans"]

_RANK = {"task.created": 0, "task.completed": 2, "task.failed": 2}
_CONTENT = frozenset({"task", "arguments", "output", "error", "error_type"})  # sanitized; the rest is bounded
_ASKED = 256  # the model-requested tool calls remembered per session, most recent
# Where instrumentations put a tool call's arguments and result: the conventions' attribute first.
_ARGUMENTS = ("gen_ai.tool.call.arguments", "tool_arguments", "gcp.vertex.agent.tool_call_args")
_INPUTS = ("input.value", "traceloop.entity.input")
_RESULTS = (
    "gen_ai.tool.call.result",
    "tool_response",
    "gcp.vertex.agent.tool_response",
    "output.value",
    "traceloop.entity.output",
)


def _name(value: str) -> str:
    """A name or id the events carry as it is (a span's name, its scope, a model): scrubbed, bounded."""
    return scrub_text(value)[:200]


def _first(span: Span, keys: tuple[str, ...]) -> Any:
    return next((value for key in keys if (value := span.attributes.get(key)) is not None), None)


@dataclass(frozen=True, slots=True)
class Mapped:
    """The events, and the sessions that could not be mapped (their span counts and reasons)."""

    events: tuple[Event, ...]
    rejected: int = 0
    errors: tuple[str, ...] = ()


def _usage(key: str, value: object) -> Any:
    """A model call's attribute as kept: token counts as non-negative integers (a string of digits
    read as one), the model and the provider as text, finish reasons decoded; anything else None
    (dropped: a sum of tokens must not meet ``"abc"``, ``-7``, ``1.5`` or ``true``)."""
    if key == "finish_reasons":
        return loads(value)
    if key.endswith("_tokens"):
        if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 18:
            return int(value)
        return value if type(value) is int and value >= 0 else None
    return value if isinstance(value, str) else None


def time_text(nanos: int) -> str:
    """Unix nanoseconds as RFC 3339 in UTC, to the nanosecond."""
    seconds, rest = divmod(nanos, 1_000_000_000)
    whole = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return f"{whole.year:04d}" + whole.strftime("-%m-%dT%H:%M:%S") + f".{rest:09d}Z"  # %Y: no zeros before 1000


def map_spans(
    spans: Sequence[Span], *, limits: Limits = LIMITS, placed: Mapping[tuple[str, str], Placed] | None = None
) -> Mapped:
    """The AEP events the spans describe (see the module docstring), in time order; ``placed``: the stored
    sessions (by trace id and span id) that spans whose parent is not given hang under (they join them)."""
    found = sessions(spans, placed)
    events: list[tuple[int, int, int, Event]] = []
    rejected, errors = 0, []
    for session in found:
        try:
            built = _Builder(session, limits).build()
        except ValidationError as exc:  # pragma: no cover - names and times are checked before
            rejected += 1 + len(session.merged) + len(session.items)
            errors.append(f"span {session.span.span_id}: {exc}")
            continue
        events.extend((at, _RANK.get(e.type, 1), len(events) + n, e) for n, (at, e) in enumerate(built))
    events.sort(key=lambda item: item[:3])
    return Mapped(tuple(event for *_, event in events), rejected, tuple(errors))


def _source(session: Session) -> str:
    if session.placed is not None:
        return session.placed.source
    return "otlp://detached" if session.detached else f"agent://{session.name}"


def _role(session: Session) -> AgentRole | None:
    """The session's place in its tree; a stored session joined by later spans keeps its own, and
    becomes an orchestrator when they bring it a sub-agent (as the trace sent whole would make it)."""
    placed = session.placed
    if placed is not None:
        return "orchestrator" if placed.role == "standalone" and session.children else placed.role
    if session.detached is not None:
        return None
    return "subagent" if session.parent is not None else "orchestrator" if session.children else "standalone"


class _Builder:
    """The events of one session."""

    def __init__(self, session: Session, limits: Limits) -> None:
        self.session = session
        self.limits = limits
        self.out: list[tuple[int, Event]] = []
        self.asked: deque[ModelToolCall] = deque(maxlen=_ASKED)  # tool calls models asked for, not yet matched

    def event(self, span: Span, suffix: str, at: int, type: str, payload: Mapping[str, Any], **extra: Any) -> str:
        session = self.session
        event_id = f"otlp-{span.trace_id}-{span.span_id}-{suffix}"
        service = span.resource.get("service.name")
        otel = {
            "trace_id": span.trace_id,
            "span_id": span.span_id,
            "span_name": _name(span.name),
            "scope": _name(span.scope),
        }
        if span.parent_id is not None:
            otel["parent_span_id"] = span.parent_id
        if isinstance(service, str):
            otel["service"] = _name(service)
        role = _role(session)
        self.out.append(
            (
                at,
                Event(
                    id=event_id,
                    time=time_text(at),
                    source=_source(session),
                    type=type,
                    session_id=session.id,
                    trace_id=span.trace_id,
                    payload=self.clean(payload),
                    parent_session_id=session.parent_id,
                    agent_role=role,
                    extensions={"otel": otel},
                    **extra,
                ),
            )
        )
        return event_id

    def clean(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Content (what the agent saw and did) sanitized; names and ids only bounded (they are
        identifiers, and scrubbing each costs as much as scrubbing a page)."""
        content = {key: value for key, value in payload.items() if key in _CONTENT}
        out = {key: _name(value) if isinstance(value, str) else value for key, value in payload.items()}
        out.update(sanitize(content, field="payload", limits=self.limits))
        rest = {key: value for key, value in out.items() if key not in _CONTENT and not isinstance(value, str)}
        out.update(sanitize(rest, field="payload", limits=self.limits) if rest else {})
        return out

    def build(self) -> list[tuple[int, Event]]:
        session, span = self.session, self.session.span
        created: dict[str, Any] = {"agent": session.name, "kind": session.kind, "task": self._task_text()}
        for key, attribute in (
            ("conversation_id", "gen_ai.conversation.id"),
            ("model", "gen_ai.request.model"),
            ("provider", "gen_ai.provider.name"),
        ):
            values = (s.attributes.get(attribute) for s in (span, *session.merged))
            value = next((v for v in values if isinstance(v, str) and v), None)
            if value:
                created[key] = value
        if span.scope:
            created["instrumentation"] = span.scope
        if session.detached is None:
            self.event(span, "start", span.start_ns, "task.created", created, subject=session.name)
        for item in sorted(session.items, key=lambda i: (i.span.start_ns, i.span.span_id)):
            {"tool": self.tool, "model": self.model, "handoff": self.handoff}[item.role](item)
        if session.detached is None:
            self.end()
        return self.out

    def _task_text(self) -> str:
        task = self.session.task
        return clean_task(task, self.limits) if task else self.session.name

    def end(self) -> None:
        session, span = self.session, self.session.span
        end = max([span.end_ns, *(s.end_ns for s in session.merged)])
        payload: dict[str, Any] = {"agent": session.name}
        output = next((t for s in (span, *session.merged) if (t := text_of_output(s))), None)
        if output is None:
            outputs = [text_of_output(i.span) for i in session.items if i.role == "model"]
            output = next((t for t in reversed(outputs) if t), None)
        if output is not None:
            payload["output"] = output
        if session.error is None:
            self.event(span, "end", end, "task.completed", {**payload, "status": "completed"}, subject=session.name)
        else:
            kind, message = session.error
            failed = {**payload, "status": "failed", "error": message, **({"error_type": kind} if kind else {})}
            self.event(span, "end", end, "task.failed", failed, subject=session.name)

    def tool(self, item: Item) -> None:
        span = item.span
        name = tool_name(span)
        call_id = span.attributes.get("gen_ai.tool.call.id")
        call_id = str(call_id) if isinstance(call_id, (str, int)) and str(call_id).strip() else None
        raw = loads(_first(span, _ARGUMENTS))
        given = loads(_first(span, _INPUTS))
        result = loads(_first(span, _RESULTS))
        call_id = call_id or envelope_call_id(raw) or envelope_call_id(given) or envelope_call_id(result)
        asked = self._match(name, call_id)
        args = unwrap(raw)
        if args is None or is_schema(args):
            args = unwrap(given)
        if asked is not None:
            call_id = call_id or asked[1]
            if (not isinstance(args, Mapping) or is_schema(args)) and isinstance(loads(asked[2]), Mapping):
                args = loads(asked[2])
        if is_schema(args):
            args = None
        arguments = dict(args) if isinstance(args, Mapping) else {} if args is None else {"_raw": args}
        called = {"tool_name": name, "arguments": arguments, **({"call_id": call_id} if call_id else {})}
        kind = span.attributes.get("gen_ai.tool.type")
        if isinstance(kind, str):
            called["tool_type"] = kind
        called_id = self.event(span, "call", span.start_ns, "tool.called", called, subject=name)
        error = error_of(span)
        common = {"tool_name": name, **({"call_id": call_id} if call_id else {})}
        if error is None:
            done = {**common, "status": "ok", "output": unwrap(result)}
            self.event(span, "result", span.end_ns, "tool.result", done, subject=name, causation_id=called_id)
        else:
            failed = {**common, "error": error[1], **({"error_type": error[0]} if error[0] else {})}
            self.event(span, "error", span.end_ns, "error.raised", failed, subject=name, causation_id=called_id)

    def _match(self, name: str, call_id: str | None) -> ModelToolCall | None:
        """The model's request for this call: same call id, else the first of the same tool."""
        found = next((c for c in self.asked if call_id is not None and c[1] == call_id), None)
        found = found or next((c for c in self.asked if c[0] == name and (call_id is None or c[1] is None)), None)
        if found is not None:
            self.asked.remove(found)
        return found

    def model(self, item: Item) -> None:
        span = item.span
        self.asked.extend(model_tool_calls(span))
        call: dict[str, Any] = {"operation": span.attributes.get("gen_ai.operation.name") or "chat"}
        for key, attribute in (
            ("model", "gen_ai.response.model"),
            ("model", "gen_ai.request.model"),
            ("provider", "gen_ai.provider.name"),
            ("input_tokens", "gen_ai.usage.input_tokens"),
            ("output_tokens", "gen_ai.usage.output_tokens"),
            ("finish_reasons", "gen_ai.response.finish_reasons"),
        ):
            value = _usage(key, span.attributes.get(attribute))
            if key not in call and value not in (None, "", "unknown"):
                call[key] = value
        self.event(span, "model", span.end_ns, "task.updated", {"model_call": call})
        error = error_of(span)
        if error is not None:
            failed = {"model": call.get("model"), "error": error[1], **({"error_type": error[0]} if error[0] else {})}
            self.event(span, "error", span.end_ns, "error.raised", failed)

    def handoff(self, item: Item) -> None:
        span = item.span
        target = next(
            (v for k, v in span.attributes.items() if k.endswith("to_agent") and isinstance(v, str) and v), None
        )
        if target is None:
            result = span.attributes.get("gen_ai.tool.call.result", span.attributes.get("output.value"))
            target = result if isinstance(result, str) and result and len(result) <= 200 else None
        if target is None and " to " in span.name:
            target = span.name.rsplit(" to ", 1)[1].strip() or None
        target = None if target is None else _name(target)
        payload = {"from_agent": self.session.name, **({"to_agent": target} if target else {})}
        started = self.event(span, "handoff", span.start_ns, "handoff.started", payload, subject=target)
        status = "failed" if error_of(span) is not None else "completed"
        done = {**payload, "status": status}
        self.event(span, "handoff-end", span.end_ns, "handoff.completed", done, subject=target, causation_id=started)
