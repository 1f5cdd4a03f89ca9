"""A verdict on a session that called no tool itself (a workflow, an orchestrator whose agents did the
work: how OTLP instrumentations record a run) learns the tool calls of the sessions below it; its
lesson held no step at all, yet came first in blocks (h18 #4)."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from tests.server.test_experience import SCOPE, http  # noqa: F401  (the fixture)
from tests.server.test_ingest import event


def _at(second: int) -> str:
    return f"2026-01-01T10:00:{second:02d}Z"


def _session(id: str, first: int, parent: str | None = None, calls: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    extra = {} if parent is None else {"parent_session_id": parent}
    out = [
        event(f"{id}-0", type="task.created", time=_at(first), session_id=id, payload={"task": f"{id} work"}, **extra)
    ]
    for i, tool in enumerate(calls, 1):
        called = {"tool_name": tool, "call_id": f"{id}-c{i}"}
        out.append(event(f"{id}-c{i}", type="tool.called", time=_at(first + i), session_id=id, payload=called, **extra))
        result = {"call_id": f"{id}-c{i}", "output": "ok"}
        out.append(event(f"{id}-r{i}", type="tool.result", time=_at(first + i), session_id=id, payload=result, **extra))
    out.append(event(f"{id}-9", type="task.completed", time=_at(first + 9), session_id=id, payload={}, **extra))
    return out


def test_a_verdict_on_a_session_whose_agents_did_the_work_learns_their_steps(http: TestClient) -> None:  # noqa: F811
    events = [
        *_session("plan", 0),
        *_session("weather", 10, parent="plan", calls=("get_weather",)),
        *_session("hotel", 20, parent="weather", calls=("book_hotel",)),
        *_session("solo", 30, calls=("own_tool",)),
    ]
    assert http.post("/events/batch", json=events).status_code == 202
    verdict = {"scope": SCOPE, "evidence": [{"id": "trip-planned", "passed": True}]}
    root = http.post("/sessions/plan/verdict", json=verdict).json()["lesson"]
    assert root["solution"]["steps"] == ["get_weather() → ok", "book_hotel() → ok"]
    own = http.post("/sessions/solo/verdict", json=verdict).json()["lesson"]  # its own calls, as before
    assert own["solution"]["steps"] == ["own_tool() → ok"]
    child = http.post("/sessions/weather/verdict", json=verdict).json()["lesson"]  # a session with calls: its own
    assert child["solution"]["steps"] == ["get_weather() → ok"]
