"""assemble is linear in the events and assembles the same runs as before (h25 #4).

The assembler before the fix is kept below as the reference: for every ``tool.called`` it scanned the
calls of the attempt for a failed one of the same tool, and for every result or error it scanned the
pending calls and removed the one it found, so a session of n calls cost n² (20,000 calls: 18.6 s).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from afteraction.core import assemble as module
from afteraction.core.assemble import assemble
from afteraction.model import Event, Run, Scope

SCOPE = Scope(tenant="acme", app="agents", project="trips")
_BASE = datetime(2026, 1, 1, 10, 0, tzinfo=timezone.utc)


# -- the reference: the assembler as it was, quadratic ------------------------------------------------


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

    def freeze(self) -> Any:
        return module.ToolCall(self.tool, self.args, self.result, self.error, self.call_id, self.at)


@dataclass
class _Attempt:
    calls: list[_Call] = field(default_factory=list)
    error: str | None = None

    @property
    def empty(self) -> bool:
        return not self.calls and self.error is None


@dataclass
class _Session:
    created: Event
    attempts: list[_Attempt] = field(default_factory=lambda: [_Attempt()])
    pending: list[_Call] = field(default_factory=list)
    announced: int | None = None
    end: Event | None = None

    def add(self, call: _Call) -> None:
        self.attempts[-1].calls.append(call)
        if not call.done:
            self.pending.append(call)

    def match(self, event: Event, tool: str | None) -> _Call | None:
        call_id, cause = module._call_id(event.payload), event.causation_id
        found = (
            next((c for c in self.pending if call_id is not None and c.call_id == call_id), None)
            or next((c for c in self.pending if cause is not None and c.event_id == cause), None)
            or next(
                (c for c in self.pending if c.tool == tool and (call_id is None or c.call_id is None)),
                None,
            )
        )
        if found is not None:
            self.pending.remove(found)
            found.done = True
        return found


def reference(events: Iterable[Event], scope: Scope) -> list[Run]:
    ordered = sorted(events, key=lambda event: event.instant)
    sessions: dict[str, _Session] = {}
    for event in ordered:
        if event.type == "task.created" and event.session_id not in sessions:
            sessions[event.session_id] = _Session(event)
    for event in ordered:
        session = sessions.get(event.session_id)
        if session is not None:
            _apply(session, event)
    return [module._freeze(session, scope) for session in sessions.values()]  # type: ignore[arg-type]


def _apply(session: _Session, event: Event) -> None:
    m, payload = module, event.payload
    if event.type in ("task.completed", "task.failed"):
        session.end = event
    elif event.type == "task.updated":
        attempt = payload.get("attempt")
        if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt != session.announced:
            session.announced = attempt
            if not session.attempts[-1].empty:
                session.attempts.append(_Attempt())
    elif event.type == "tool.called":
        name = m._tool(payload) or m._name(event.subject) or "unknown"
        if any(call.tool == name and call.error is not None for call in session.attempts[-1].calls):
            session.attempts.append(_Attempt())
        session.add(_Call(name, m._args(payload), event.instant, m._call_id(payload), event.id))
    elif event.type == "tool.result":
        tool = m._tool(payload)
        matched = session.match(event, tool)
        if matched is None:
            matched = _Call(
                tool or m._name(event.subject) or "unknown", {}, event.instant, m._call_id(payload), event.id
            )
            matched.done = True
            session.add(matched)
        matched.result = m._result(payload)
        if m._failed(payload):
            matched.error = m._error(payload) or m._cut(str(matched.result or "tool failed"))
    elif event.type == "error.raised":
        matched = session.match(event, m._tool(payload))
        text = m._error(payload) or "error raised"
        if matched is not None:
            matched.error = text
        elif session.attempts[-1].error is None:
            session.attempts[-1].error = text


# -- random sessions ----------------------------------------------------------------------------------

_TYPES = ("tool.called", "tool.called", "tool.result", "tool.result", "error.raised", "task.updated", "task.completed")
_TOOLS = st.sampled_from([None, "search", "book", "pay"])
_IDS = st.sampled_from([None, "c1", "c2", "c3"])


@st.composite
def _events(draw: st.DrawFn) -> list[Event]:
    count = draw(st.integers(0, 40))
    sessions = ("s1", "s2")
    out = [_event(0, "task.created", "s1", {"task": "t"}), _event(draw(st.integers(0, 5)), "task.created", "s2", {})]
    for i in range(count):
        kind = draw(st.sampled_from(_TYPES))
        payload: dict[str, Any] = {}
        if (tool := draw(_TOOLS)) is not None:
            payload["tool_name"] = tool
        if (call_id := draw(_IDS)) is not None:
            payload["call_id"] = call_id
        if kind == "tool.result" and draw(st.booleans()):
            payload.update(draw(st.sampled_from([{"status": "error"}, {"is_error": True}, {"error": "boom"}])))
        if kind == "task.updated":
            payload["attempt"] = draw(st.integers(1, 3))
        cause = draw(st.sampled_from([None, *(f"e{j}" for j in range(max(i, 1)))]))
        second = draw(st.integers(0, 20))  # ties: the sort keeps input order
        out.append(_event(second, kind, draw(st.sampled_from(sessions)), payload, id=f"e{i}", cause=cause))
    return out


def _event(second: int, type: str, session: str, payload: dict[str, Any], **more: Any) -> Event:
    time_text = (_BASE + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Event(
        id=more.get("id", f"{session}-{type}"),
        time=time_text,
        source="agent://worker",
        type=type,
        session_id=session,
        trace_id="trc",
        payload=payload,
        causation_id=more.get("cause"),
    )


@settings(max_examples=300, derandomize=True, deadline=None)
@given(_events())
def test_the_linear_assembler_builds_the_runs_the_reference_built(events: list[Event]) -> None:
    assert assemble(events, SCOPE) == reference(events, SCOPE)


# -- cost: n and 8n events ----------------------------------------------------------------------------


def _distinct_tools(n: int) -> list[Event]:
    """n calls of n tools, none answered: each call looked for a failed one among all before it."""
    calls = [_event(1, "tool.called", "s", {"tool": f"t{i}", "call_id": f"c{i}"}, id=f"c{i}") for i in range(n)]
    return [_event(0, "task.created", "s", {"task": "x"}), *calls]


def _answered_newest_first(n: int) -> list[Event]:
    """n calls, then their results newest first, by call id and by causation: each result scanned the
    pending calls to the last one."""
    calls = [_event(1, "tool.called", "s", {"tool": "t", "call_id": f"c{i}"}, id=f"c{i}") for i in range(n)]
    results = [
        _event(
            2,
            "tool.result",
            "s",
            {"output": "ok", **({"call_id": f"c{i}"} if i % 2 else {})},
            id=f"r{i}",
            cause=f"c{i}",
        )
        for i in reversed(range(n))
    ]
    return [_event(0, "task.created", "s", {"task": "x"}), *calls, *results]


def _cpu(make: Callable[[int], list[Event]], n: int) -> float:
    """The least CPU time of five assemblies, the garbage collector kept out (a collection of the objects
    earlier tests left made the large one 20 times the small one in a whole-suite run)."""
    events = make(n)
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(5):
            start = time.process_time()
            assemble(events, SCOPE)
            best = min(best, time.process_time() - start)
    finally:
        gc.enable()
    return best


def test_assembling_8x_the_calls_costs_far_less_than_64x() -> None:
    """Linear gives ~8x (n log n for the sort a little more), quadratic 64x; the bound is generous."""
    for make in (_distinct_tools, _answered_newest_first):
        small, large = _cpu(make, 1500), _cpu(make, 12_000)
        assert large < 20 * max(small, 0.002), (make.__name__, small, large)
