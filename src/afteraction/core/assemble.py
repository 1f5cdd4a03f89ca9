"""Assemble AEP events into runs: one Run per session that has a ``task.created``.

Events are first put in time order by their parsed instant (``Event.instant``; ties keep their
input order), never by the time text, whose offsets make string order wrong. Then, per session:

- ``task.created`` opens the run: its id is the session id, its parent the parent session, its
  agent the payload's ``node``/``agent`` or the source's name after ``agent://``, and its task
  the payload's ``task``/``input``/``prompt``/``description``/``goal`` text, else the subject,
  else the agent's name.
- ``task.completed`` / ``task.failed`` end it (the last one wins); a run with neither is still
  ``running``. A failure's error is ``"<error_type>: <error>"`` from its payload.
- ``tool.called`` opens a call (name in ``tool_name``/``tool``/``name``, arguments in
  ``arguments``/``input``/``args``; arguments that are not an object are kept as ``{"_raw": …}``).
  ``tool.result`` and ``error.raised`` close the pending call they belong to: the one with the
  same call id (``call_id``/``tool_call_id``/``id``), else the one their ``causation_id``
  points at, else the oldest pending call of the same tool. A result that closes nothing is a
  call of its own; an ``error.raised`` that closes nothing is an error of the attempt.
- ``task.updated`` with an integer ``attempt`` starts a new attempt (unless the current one is
  still empty or that number was already announced). Calling a tool again after it failed in
  this attempt starts one too, as the recorder does, so a retry loop reads as attempts.

Other event types are ignored. Runs come in the order of their ``task.created``. The cost is the sort,
then O(1) per event: the pending calls and an attempt's failed tools are indexed, not scanned.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from afteraction.model import Attempt, Event, Run, Scope, ToolCall

__all__ = ["assemble"]

_TASK_KEYS = ("task", "input", "prompt", "description", "goal")
_AGENT_KEYS = ("node", "agent")
_TOOL_KEYS = ("tool_name", "tool", "name")
_ARGS_KEYS = ("arguments", "input", "args")
_CALL_ID_KEYS = ("call_id", "tool_call_id", "id")
_RESULT_KEYS = ("output", "result", "content")
_FAILED_STATUSES = frozenset({"error", "failed", "failure"})
_MAX_NAME = 200
_MAX_TEXT = 16_384
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(eq=False)
class _Call:
    tool: str
    args: dict[str, Any]
    at: datetime
    call_id: str | None = None
    event_id: str | None = None
    result: Any = None
    error: str | None = None
    done: bool = False
    attempt: _Attempt | None = None

    def freeze(self) -> ToolCall:
        return ToolCall(self.tool, self.args, self.result, self.error, self.call_id, self.at)

    def fail(self, error: str) -> None:
        """Set the error, and note the tool among its attempt's failed ones."""
        self.error = error
        if self.attempt is not None:
            self.attempt.failed.add(self.tool)


@dataclass
class _Attempt:
    calls: list[_Call] = field(default_factory=list)
    error: str | None = None
    failed: set[str] = field(default_factory=set)  # tools of calls of this attempt with an error

    @property
    def empty(self) -> bool:
        return not self.calls and self.error is None


_Queues = dict[str, deque[_Call]]


def _first_pending(queues: _Queues, key: str | None) -> _Call | None:
    """The oldest call still pending in ``queues[key]``; closed calls at its head are dropped as met."""
    if key is None or (queue := queues.get(key)) is None:
        return None
    while queue and queue[0].done:
        queue.popleft()
    if not queue:
        del queues[key]
        return None
    return queue[0]


@dataclass
class _Session:
    """A run being assembled. Pending calls are indexed in arrival order by call id, by event id, by
    tool, and by tool among calls with no call id; a closed call leaves its queues when it reaches
    their head, so every event costs O(1) amortized."""

    created: Event
    attempts: list[_Attempt] = field(default_factory=lambda: [_Attempt()])
    announced: int | None = None
    end: Event | None = None
    by_call_id: _Queues = field(default_factory=dict)
    by_event_id: _Queues = field(default_factory=dict)
    by_tool: _Queues = field(default_factory=dict)
    by_tool_no_id: _Queues = field(default_factory=dict)

    def add(self, call: _Call) -> None:
        attempt = self.attempts[-1]
        call.attempt = attempt
        attempt.calls.append(call)
        if call.error is not None:
            attempt.failed.add(call.tool)
        if not call.done:
            for queues, key in (
                (self.by_call_id, call.call_id),
                (self.by_event_id, call.event_id),
                (self.by_tool, call.tool),
                (self.by_tool_no_id, call.tool if call.call_id is None else None),
            ):
                if key is not None:
                    queues.setdefault(key, deque()).append(call)

    def match(self, event: Event, tool: str | None) -> _Call | None:
        """The pending call ``event`` closes: by call id, then causation, then oldest of the tool
        (by name only among calls whose id cannot contradict it)."""
        call_id = _call_id(event.payload)
        found = (
            _first_pending(self.by_call_id, call_id)
            or _first_pending(self.by_event_id, event.causation_id)
            or _first_pending(self.by_tool if call_id is None else self.by_tool_no_id, tool)
        )
        if found is not None:
            found.done = True
        return found


def assemble(events: Iterable[Event], scope: Scope) -> list[Run]:
    """The runs the events describe, one per session with a ``task.created``, in creation order."""
    ordered = sorted(events, key=lambda event: event.instant)  # sorted() is stable: ties keep input order
    sessions: dict[str, _Session] = {}
    for event in ordered:
        if event.type == "task.created" and event.session_id not in sessions:
            sessions[event.session_id] = _Session(event)
    for event in ordered:
        session = sessions.get(event.session_id)
        if session is not None:
            _apply(session, event)
    return [_freeze(session, scope) for session in sessions.values()]


def _apply(session: _Session, event: Event) -> None:
    payload = event.payload
    if event.type in ("task.completed", "task.failed"):
        session.end = event
    elif event.type == "task.updated":
        attempt = payload.get("attempt")
        if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt != session.announced:
            session.announced = attempt
            if not session.attempts[-1].empty:
                session.attempts.append(_Attempt())
    elif event.type == "tool.called":
        name = _tool(payload) or _name(event.subject) or "unknown"
        if name in session.attempts[-1].failed:
            session.attempts.append(_Attempt())  # the tool that failed is tried again: a new attempt
        session.add(_Call(name, _args(payload), event.instant, _call_id(payload), event.id))
    elif event.type == "tool.result":
        tool = _tool(payload)
        matched = session.match(event, tool)
        if matched is None:
            matched = _Call(tool or _name(event.subject) or "unknown", {}, event.instant, _call_id(payload), event.id)
            matched.done = True
            session.add(matched)
        matched.result = _result(payload)
        if _failed(payload):
            matched.fail(_error(payload) or _cut(str(matched.result or "tool failed")))
    elif event.type == "error.raised":
        matched = session.match(event, _tool(payload))
        text = _error(payload) or "error raised"
        if matched is not None:
            matched.fail(text)
        elif session.attempts[-1].error is None:
            session.attempts[-1].error = text


def _freeze(session: _Session, scope: Scope) -> Run:
    created, end = session.created, session.end
    agent = _agent(created)
    failed = end is not None and end.type == "task.failed"
    return Run(
        id=created.session_id,
        task=_task(created, agent),
        scope=scope,
        started_at=created.instant,
        attempts=tuple(
            Attempt(index, tuple(call.freeze() for call in attempt.calls), attempt.error)
            for index, attempt in enumerate(session.attempts)
        ),
        ended_at=None if end is None else end.instant,
        state="running" if end is None else "failed" if failed else "completed",
        error=_error(end.payload) if end is not None and failed else None,
        session_id=created.session_id,
        trace_id=created.trace_id,
        agent=agent,
        parent_id=created.parent_session_id,
    )


# -- reading payloads --------------------------------------------------------------------------------


def _first(payload: Mapping[str, Any], keys: Iterable[str]) -> Any:
    for key in keys:
        if payload.get(key) is not None:
            return payload[key]
    return None


def _cut(value: str, limit: int = _MAX_TEXT) -> str:
    return value if len(value) <= limit else value[:limit]


def _name(value: object) -> str | None:
    """A usable name (tool, agent, call id): a non-blank string or an integer, cleaned and cut."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    cleaned = _CONTROL.sub(" ", value).strip()[:_MAX_NAME].strip()
    return cleaned or None


def _tool(payload: Mapping[str, Any]) -> str | None:
    for key in _TOOL_KEYS:
        if (name := _name(payload.get(key))) is not None:
            return name
    return None


def _call_id(payload: Mapping[str, Any]) -> str | None:
    for key in _CALL_ID_KEYS:
        if (value := _name(payload.get(key))) is not None:
            return value
    return None


def _args(payload: Mapping[str, Any]) -> dict[str, Any]:
    value = _first(payload, _ARGS_KEYS)
    if value is None:
        return {}
    if isinstance(value, Mapping) and all(isinstance(key, str) for key in value):
        return dict(value)
    return {"_raw": value}


def _result(payload: Mapping[str, Any]) -> Any:
    """The result; a payload that names none of the result keys is its own result (an explicit
    ``"output": null`` says there was none)."""
    value = _first(payload, _RESULT_KEYS)
    return dict(payload) if value is None and not any(key in payload for key in _RESULT_KEYS) else value


def _failed(payload: Mapping[str, Any]) -> bool:
    status = payload.get("status")
    return (
        payload.get("is_error") is True
        or (isinstance(status, str) and status.lower() in _FAILED_STATUSES)
        or _error(payload) is not None
    )


def _error(payload: Mapping[str, Any]) -> str | None:
    """``"<error_type>: <error>"`` when both are there, else whichever is."""
    error, kind = payload.get("error"), payload.get("error_type")
    error = error.strip() if isinstance(error, str) else ""
    kind = kind.strip() if isinstance(kind, str) else ""
    if error and kind:
        return _cut(f"{kind}: {error}")
    return _cut(error or kind) or None


def _agent(event: Event) -> str | None:
    for key in _AGENT_KEYS:
        if (name := _name(event.payload.get(key))) is not None:
            return name
    if event.source.startswith("agent://"):
        return _name(event.source[len("agent://") :].strip("/"))
    return None


def _task(event: Event, agent: str | None) -> str:
    for key in _TASK_KEYS:
        value = event.payload.get(key)
        if isinstance(value, str) and value.strip():
            return _cut(value)
    if event.subject is not None and event.subject.strip():
        return _cut(event.subject)
    return agent or event.session_id
