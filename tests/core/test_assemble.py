"""assemble: AEP events into runs, against a real SDK stream and unit cases."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from afteraction.core.assemble import assemble
from afteraction.model import Event, Run, Scope
from tests.conftest import CONFORMANCE

STREAM = CONFORMANCE / "aep-sdk-streams" / "openai-agents" / "events.jsonl"
SCOPE = Scope(tenant="acme", app="agents", project="trips")


def _stream() -> list[Event]:
    with STREAM.open(encoding="utf-8") as handle:
        return [Event.from_dict(json.loads(line)) for line in handle if line.strip()]


def _runs_by_agent(runs: list[Run]) -> dict[str | None, Run]:
    return {run.agent: run for run in runs}


_BASE = datetime(2026, 1, 1, 10, 0, tzinfo=timezone.utc)


class Stream:
    """Builds a session's events, one second apart."""

    def __init__(self, session: str = "ses_1", **envelope: Any) -> None:
        self.session = session
        self.envelope = envelope
        self.events: list[Event] = []

    def add(self, type: str, payload: dict[str, Any] | None = None, **envelope: Any) -> Event:
        time = (_BASE + timedelta(seconds=len(self.events))).strftime("%Y-%m-%dT%H:%M:%SZ")
        event = Event.from_dict(
            {
                "specversion": "0.2.0",
                "id": envelope.pop("id", f"evt_{self.session}_{len(self.events)}"),
                "time": envelope.pop("time", time),
                "source": "agent://worker",
                "type": type,
                "session_id": self.session,
                "trace_id": "trc_1",
                "payload": payload or {},
                **self.envelope,
                **envelope,
            }
        )
        self.events.append(event)
        return event


def _only(runs: list[Run]) -> Run:
    assert len(runs) == 1
    return runs[0]


# -- the real SDK stream ---------------------------------------------------------------------------


def test_sdk_stream_gives_the_five_runs_of_run_md() -> None:
    runs = assemble(_stream(), SCOPE)
    assert [run.agent for run in runs] == ["trip_planner", "triage", "travel_assistant", "calculator_run", "calculator"]
    assert [run.id for run in runs] == [
        "ses_20c47e95a7e0",
        "ses_81537f6b46b1",
        "ses_2eedc3a32ff2",
        "ses_25f0ef8ab479",
        "ses_88580a5f8d8e",
    ]
    by = _runs_by_agent(runs)
    assert by["trip_planner"].parent_id is None
    assert by["calculator_run"].parent_id is None
    assert by["triage"].parent_id == "ses_20c47e95a7e0"
    assert by["travel_assistant"].parent_id == "ses_20c47e95a7e0"
    assert by["calculator"].parent_id == "ses_25f0ef8ab479"
    assert {run.trace_id for run in runs[:3]} == {"trc_26a4693480a34af6"}
    assert {run.trace_id for run in runs[3:]} == {"trc_d33ce3ca3d0748b3"}
    assert all(run.scope == SCOPE and run.session_id == run.id for run in runs)
    assert by["trip_planner"].task == "trip_planner"  # no task text in the payload: the subject


def test_sdk_stream_states() -> None:
    by = _runs_by_agent(assemble(_stream(), SCOPE))
    for agent in ("trip_planner", "triage", "travel_assistant", "calculator_run"):
        assert by[agent].state == "completed", agent
        assert by[agent].error is None
        assert by[agent].ended_at is not None
    calculator = by["calculator"]
    assert calculator.state == "failed"
    assert calculator.error == "Error: Error running tool divide: float division by zero"
    assert calculator.ended_at == datetime(2026, 11, 29, 14, 57, 33, 670000, tzinfo=timezone.utc)
    assert calculator.started_at == datetime(2026, 11, 29, 14, 57, 33, 664000, tzinfo=timezone.utc)


def test_sdk_stream_tool_calls() -> None:
    by = _runs_by_agent(assemble(_stream(), SCOPE))
    weather, hotel = by["travel_assistant"].calls
    assert (weather.tool, dict(weather.args), weather.result, weather.error) == (
        "get_weather",
        {"city": "Lisbon"},
        "Sunny, 21C in Lisbon",
        None,
    )
    assert weather.ok
    assert weather.at == datetime(2026, 11, 29, 14, 57, 33, 648000, tzinfo=timezone.utc)
    assert hotel.tool == "book_hotel"
    assert dict(hotel.args) == {"city": "Lisbon", "nights": 2}
    assert hotel.result is None
    assert hotel.error == "Error: Tool execution failed. Error details are redacted."
    (divide,) = by["calculator"].calls
    assert (divide.tool, dict(divide.args), divide.result) == ("divide", {"a": 1, "b": 0}, None)
    assert divide.error == "Error: float division by zero"
    for agent in ("trip_planner", "triage", "calculator_run"):
        assert by[agent].calls == ()
    for run in by.values():
        assert len(run.attempts) == 1
        assert run.attempts[0].error is None
    assert by["travel_assistant"].attempts[0].failed  # its book_hotel call failed
    assert not by["triage"].attempts[0].failed


def test_sdk_stream_in_scrambled_input_order_gives_the_same_runs() -> None:
    events = _stream()
    expected = assemble(events, SCOPE)
    groups: dict[datetime, list[Event]] = {}
    for event in events:
        groups.setdefault(event.instant, []).append(event)  # same-instant events keep their order
    for seed in range(5):
        order = list(groups)
        random.Random(seed).shuffle(order)
        scrambled = [event for instant in order for event in groups[instant]]
        assert scrambled != events
        assert assemble(scrambled, SCOPE) == expected


# -- pairing ---------------------------------------------------------------------------------------


def test_pairing_by_call_id() -> None:
    s = Stream()
    s.add("task.created", {"task": "look things up"})
    s.add("tool.called", {"tool_name": "search", "arguments": {"q": "a"}, "call_id": "c1"})
    s.add("tool.called", {"tool_name": "search", "arguments": {"q": "b"}, "call_id": "c2"})
    s.add("tool.result", {"tool_name": "search", "output": "B", "call_id": "c2"})
    s.add("tool.result", {"tool_name": "search", "output": "A", "tool_call_id": "c1"})
    run = _only(assemble(s.events, SCOPE))
    assert [(c.args["q"], c.result, c.call_id) for c in run.calls] == [("a", "A", "c1"), ("b", "B", "c2")]
    assert run.task == "look things up"
    assert run.state == "running"
    assert run.ended_at is None


def test_pairing_by_causation_id() -> None:
    s = Stream()
    s.add("task.created", {"prompt": "two searches"})
    first = s.add("tool.called", {"tool": "search", "input": {"q": "a"}})
    second = s.add("tool.called", {"tool": "search", "input": {"q": "b"}})
    s.add("tool.result", {"tool": "search", "output": "B"}, causation_id=second.id)
    s.add("tool.result", {"tool": "search", "output": "A"}, causation_id=first.id)
    run = _only(assemble(s.events, SCOPE))
    assert [(c.args["q"], c.result) for c in run.calls] == [("a", "A"), ("b", "B")]
    assert run.task == "two searches"


def test_pairing_by_name_takes_the_oldest_pending_call() -> None:
    s = Stream()
    s.add("task.created", {"goal": "fetch"})
    s.add("tool.called", {"name": "fetch", "args": {"n": 1}})
    s.add("tool.called", {"name": "other", "args": {}})
    s.add("tool.called", {"name": "fetch", "args": {"n": 2}})
    s.add("tool.result", {"name": "fetch", "result": "one"})
    s.add("tool.result", {"name": "fetch", "result": "two"})
    run = _only(assemble(s.events, SCOPE))
    assert [(c.tool, c.result) for c in run.calls] == [("fetch", "one"), ("other", None), ("fetch", "two")]
    other = run.calls[1]
    assert other.result is None and other.error is None  # unfinished: neither result nor error


def test_name_pairing_never_contradicts_a_call_id() -> None:
    s = Stream()
    s.add("task.created", {"task": "t"})
    s.add("tool.called", {"tool_name": "fetch", "call_id": "c1"})
    s.add("tool.result", {"tool_name": "fetch", "output": "x", "call_id": "c9"})
    run = _only(assemble(s.events, SCOPE))
    assert [(c.call_id, c.result) for c in run.calls] == [("c1", None), ("c9", "x")]


def test_unpaired_result_is_a_call_of_its_own() -> None:
    s = Stream()
    s.add("task.created", {"description": "d"})
    s.add("tool.result", {"tool_name": "lookup", "output": {"rows": 3}})
    (call,) = _only(assemble(s.events, SCOPE)).calls
    assert (call.tool, dict(call.args), call.result, call.error) == ("lookup", {}, {"rows": 3}, None)
    assert call.at == _BASE + timedelta(seconds=1)


def test_failed_tool_result_is_an_error() -> None:
    s = Stream()
    s.add("task.created", {"task": "t"})
    s.add("tool.called", {"tool_name": "pay"})
    s.add("tool.result", {"tool_name": "pay", "output": "card declined", "status": "error"})
    (call,) = _only(assemble(s.events, SCOPE)).calls
    assert call.error == "card declined"
    assert not call.ok


def test_calling_a_failed_tool_again_starts_a_new_attempt_as_the_recorder_does() -> None:
    s = Stream()
    s.add("task.created", {"task": "t"})
    s.add("tool.called", {"tool_name": "lookup", "call_id": "c0"})
    s.add("tool.result", {"call_id": "c0", "output": "found"})
    s.add("tool.called", {"tool_name": "pay", "call_id": "c1"})
    s.add("error.raised", {"call_id": "c1", "error_type": "LockHeldError", "error": "lock held"})
    s.add("tool.called", {"tool_name": "lookup", "call_id": "c2"})  # another tool: the same attempt
    s.add("tool.result", {"call_id": "c2", "output": "found"})
    s.add("tool.called", {"tool_name": "pay", "call_id": "c3"})  # the failed tool again: a new attempt
    s.add("tool.result", {"call_id": "c3", "output": "paid"})
    run = _only(assemble(s.events, SCOPE))
    assert [[call.call_id for call in attempt.calls] for attempt in run.attempts] == [["c0", "c1", "c2"], ["c3"]]
    assert run.attempts[0].failed and not run.attempts[1].failed


def test_string_arguments_are_kept_raw() -> None:
    s = Stream()
    s.add("task.created", {"task": "t"})
    s.add("tool.called", {"tool_name": "get_weather", "arguments": "{'city': 'Lisbon'}"})
    (call,) = _only(assemble(s.events, SCOPE)).calls
    assert dict(call.args) == {"_raw": "{'city': 'Lisbon'}"}


def test_fixture_shaped_tool_events_pair() -> None:
    s = Stream()
    s.add("task.created", {"task": "Summarise quarterly report"})
    called = s.add("tool.called", {"tool": "web_search", "input": {"query": "Q3 revenue figures"}})
    s.add(
        "tool.result",
        {"tool": "web_search", "output": {"results": ["$4.2B"]}, "status": "success"},
        causation_id=called.id,
    )
    (call,) = _only(assemble(s.events, SCOPE)).calls
    assert (call.tool, dict(call.args), call.result, call.error) == (
        "web_search",
        {"query": "Q3 revenue figures"},
        {"results": ["$4.2B"]},
        None,
    )


# -- errors ----------------------------------------------------------------------------------------


def test_error_with_a_tool_name_fails_the_pending_call() -> None:
    s = Stream()
    s.add("task.created", {"task": "t"})
    s.add("tool.called", {"tool_name": "book"})
    s.add("error.raised", {"tool_name": "book", "error": "no rooms"})
    s.add("tool.called", {"tool_name": "book"})
    s.add("tool.result", {"tool_name": "book", "output": "booked"})
    run = _only(assemble(s.events, SCOPE))
    assert [(c.error, c.result) for c in run.calls] == [("no rooms", None), (None, "booked")]
    assert run.attempts[0].error is None


def test_error_without_a_tool_name_is_an_attempt_error() -> None:
    s = Stream()
    s.add("task.created", {"task": "t"})
    s.add("tool.called", {"tool_name": "book"})
    s.add("error.raised", {"error": "model refused", "error_type": "RefusalError"})
    s.add("error.raised", {"error": "later error"})
    run = _only(assemble(s.events, SCOPE))
    assert run.attempts[0].error == "RefusalError: model refused"  # the first error stands
    (call,) = run.calls
    assert call.error is None and call.result is None
    assert run.attempts[0].failed


def test_error_with_a_tool_name_but_nothing_pending_is_an_attempt_error() -> None:
    s = Stream()
    s.add("task.created", {"task": "t"})
    s.add("error.raised", {"tool_name": "book", "error_type": "Timeout"})
    run = _only(assemble(s.events, SCOPE))
    assert run.attempts[0].error == "Timeout"
    assert run.calls == ()


def test_task_failed_sets_state_and_error() -> None:
    s = Stream()
    s.add("task.created", {"task": "t"})
    s.add("task.failed", {"error": "gave up"})
    run = _only(assemble(s.events, SCOPE))
    assert (run.state, run.error, run.ended_at) == ("failed", "gave up", _BASE + timedelta(seconds=1))


# -- order, attempts, sessions ---------------------------------------------------------------------


def test_events_are_ordered_by_instant_not_by_text() -> None:
    s = Stream()
    # 10:00+02:00 is 08:00Z: before 09:00Z, though its text sorts after it
    s.add("task.created", {"task": "t"}, time="2026-01-01T07:59:00Z")
    s.add("tool.result", {"tool_name": "fetch", "output": "late"}, time="2026-01-01T09:00:00Z")
    s.add("tool.called", {"tool_name": "fetch"}, time="2026-01-01T10:00:00+02:00")
    s.add("task.completed", {}, time="2026-01-01T04:30:00-05:00")  # 09:30Z
    events = list(reversed(s.events))
    run = _only(assemble(events, SCOPE))
    (call,) = run.calls
    assert call.result == "late"
    assert call.at == datetime(2026, 1, 1, 8, 0, tzinfo=timezone.utc)
    assert run.state == "completed"
    assert run.ended_at == datetime(2026, 1, 1, 9, 30, tzinfo=timezone.utc)


def test_runs_come_in_creation_order_by_instant() -> None:
    a, b = Stream("ses_a"), Stream("ses_b")
    b.add("task.created", {"task": "b"}, time="2026-01-01T10:00:00+02:00")
    a.add("task.created", {"task": "a"}, time="2026-01-01T09:00:00Z")
    runs = assemble([*a.events, *b.events], SCOPE)
    assert [run.id for run in runs] == ["ses_b", "ses_a"]


def test_ties_keep_input_order() -> None:
    s = Stream()
    s.add("task.created", {"task": "t"}, time="2026-01-01T10:00:00Z")
    s.add("tool.called", {"tool_name": "x", "arguments": {"n": 1}}, time="2026-01-01T10:00:01Z")
    s.add("tool.called", {"tool_name": "x", "arguments": {"n": 2}}, time="2026-01-01T12:00:01+02:00")
    run = _only(assemble(s.events, SCOPE))
    assert [c.args["n"] for c in run.calls] == [1, 2]
    run = _only(assemble([s.events[0], s.events[2], s.events[1]], SCOPE))
    assert [c.args["n"] for c in run.calls] == [2, 1]


def test_task_updated_with_an_attempt_starts_a_new_attempt() -> None:
    s = Stream()
    s.add("task.created", {"task": "refund"})
    s.add("task.updated", {"attempt": 1})  # nothing happened yet: still the first attempt
    s.add("tool.called", {"tool_name": "refund", "arguments": {"strategy": "retry"}})
    s.add("error.raised", {"tool_name": "refund", "error": "lock held", "error_type": "LockHeldError"})
    s.add("task.updated", {"attempt": 2})
    s.add("task.updated", {"attempt": 2})  # the same number again: no new attempt
    s.add("task.updated", {"attempt": True})  # not an integer
    s.add("task.updated", {"progress": 3})
    s.add("tool.called", {"tool_name": "refund", "arguments": {"strategy": "wait"}})
    s.add("tool.result", {"tool_name": "refund", "output": "issued"})
    s.add("task.completed", {})
    run = _only(assemble(s.events, SCOPE))
    assert [a.index for a in run.attempts] == [0, 1]
    first, second = run.attempts
    assert [c.error for c in first.calls] == ["LockHeldError: lock held"]
    assert [c.result for c in second.calls] == ["issued"]
    assert first.failed and not second.failed
    assert run.state == "completed"


def test_sessions_without_task_created_and_unused_types_are_ignored() -> None:
    orphan = Stream("ses_orphan")
    orphan.add("tool.called", {"tool_name": "x"})
    s = Stream()
    s.add("task.created", {})
    s.add("memory.read", {"key": "k"})
    s.add("policy.blocked", {"reason": "r"})
    s.add("handoff.started", {"to_agent": "b"})
    run = _only(assemble([*orphan.events, *s.events], SCOPE))
    assert run.id == "ses_1"
    assert run.calls == ()
    assert run.task == "worker"  # no task text, no subject: the agent's name from the source
    assert run.agent == "worker"
    assert len(run.attempts) == 1


@pytest.mark.parametrize(
    ("payload", "subject", "task", "agent"),
    [
        ({"task": "do it", "node": "n"}, "s", "do it", "n"),
        ({"input": "in", "agent": "ag"}, None, "in", "ag"),
        ({"input": {"not": "text"}, "prompt": "p"}, None, "p", "worker"),
        ({"task": "   "}, "the subject", "the subject", "worker"),
        ({"node": "planner"}, None, "planner", "planner"),
    ],
)
def test_task_and_agent_names(payload: dict[str, Any], subject: str | None, task: str, agent: str) -> None:
    s = Stream()
    s.add("task.created", payload, **({"subject": subject} if subject else {}))
    run = _only(assemble(s.events, SCOPE))
    assert (run.task, run.agent) == (task, agent)


def test_parent_and_trace_come_from_task_created() -> None:
    s = Stream("ses_child", parent_session_id="ses_parent")
    s.add("task.created", {"task": "t"})
    run = _only(assemble(s.events, SCOPE))
    assert (run.parent_id, run.trace_id, run.session_id) == ("ses_parent", "trc_1", "ses_child")


def test_no_events_no_runs() -> None:
    assert assemble([], SCOPE) == []
