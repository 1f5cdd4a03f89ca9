"""A verdict reads a bounded number of a session's events (h25 #4): it read every event of the session,
and every event of up to 64 sessions below it, so a verdict on a session of 20,000 tool calls took 22 s.
Now: the first 10,000 events in order, then at most 1,000 of the task, end and error events after
them; the sessions below share one budget of 10,000 tool events (``server.session_runs``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from afteraction.model import Event, Scope
from afteraction.server.session_runs import session_run
from afteraction.store.events import EventStore, StoredEvent, open_events

SCOPE = Scope(tenant="dev", app="shop", project="refunds")
_BASE = datetime(2026, 1, 1, 10, 0, tzinfo=timezone.utc)
HEAD, TAIL = 10_000, 1_000  # the documented bounds: session_runs.RUN_EVENTS and TAIL_EVENTS


class Counting:
    """The event store, counting the events its ``events`` reads return."""

    def __init__(self, store: EventStore) -> None:
        self.store, self.read = store, 0

    def events(self, *args: Any, **kwargs: Any) -> list[StoredEvent]:
        found = self.store.events(*args, **kwargs)
        self.read += len(found)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    found = open_events(str(tmp_path / "server.db"))
    yield found
    found.close()


def _event(n: int, session: str, type: str, payload: dict[str, Any], parent: str | None = None) -> Event:
    at = (_BASE + timedelta(milliseconds=n)).isoformat().replace("+00:00", "Z")
    return Event(
        id=f"{session}-{n}",
        time=at,
        source="agent://refunds",
        type=type,
        session_id=session,
        trace_id="trc",
        payload=payload,
        parent_session_id=parent,
    )


def _calls(session: str, count: int, parent: str | None = None, first: int = 1) -> list[Event]:
    out = []
    for i in range(first, first + count):
        out.append(_event(2 * i, session, "tool.called", {"tool_name": f"lookup{i % 7}", "call_id": f"c{i}"}, parent))
        out.append(_event(2 * i + 1, session, "tool.result", {"call_id": f"c{i}", "output": "ok"}, parent))
    return out


def test_a_verdict_on_a_long_session_reads_its_head_and_its_end_not_every_event(store: EventStore) -> None:
    events = [_event(0, "big", "task.created", {"task": "refund the order"}), *_calls("big", 7_000)]
    events.append(_event(20_000, "big", "error.raised", {"error": "gateway down"}))
    events.append(_event(20_001, "big", "task.failed", {"error": "no refund", "error_type": "Gave up"}))
    store.add_many("dev", events)
    counting = Counting(store)
    run = session_run(SimpleNamespace(events=counting), "dev", "big", SCOPE)  # type: ignore[arg-type]
    assert counting.read <= HEAD + 1 + TAIL  # one more than the head tells that the session holds more
    assert run.task == "refund the order"
    assert (run.state, run.error) == ("failed", "Gave up: no refund")  # its end lies past the head
    assert run.attempts[-1].error == "gateway down"  # and so does this error
    first = run.attempts[0].calls[0]
    assert (first.tool, first.call_id, first.result) == ("lookup1", "c1", "ok")


def test_the_sessions_below_a_judged_one_share_one_budget(store: EventStore) -> None:
    events = [_event(0, "plan", "task.created", {"task": "plan the trip"})]
    for child in ("a", "b", "c"):
        events += [_event(1, child, "task.created", {"task": child}, "plan"), *_calls(child, 3_000, "plan")]
    events.append(_event(50_000, "plan", "task.completed", {}))
    store.add_many("dev", events)
    counting = Counting(store)
    run = session_run(SimpleNamespace(events=counting), "dev", "plan", SCOPE)  # type: ignore[arg-type]
    assert counting.read <= 2 + HEAD + 3  # the session's own two, the budget, a short page per child
    assert run.state == "completed"
    assert run.attempts[0].calls[0].tool == "lookup1"


def test_a_session_within_the_bounds_is_read_whole(store: EventStore) -> None:
    events = [_event(0, "small", "task.created", {"task": "t"}), *_calls("small", 50)]
    events.append(_event(1_000, "small", "task.completed", {}))
    store.add_many("dev", events)
    counting = Counting(store)
    run = session_run(SimpleNamespace(events=counting), "dev", "small", SCOPE)  # type: ignore[arg-type]
    assert counting.read == len(events)
    assert [call.call_id for call in run.calls] == [f"c{i}" for i in range(1, 51)]
