"""The Agent Event Protocol's own Python SDK (``agent-event-protocol`` from the registry), pointed
at a real `afteraction serve`, unchanged: it emits a whole run, reads it back through its own
read calls, and the host's verdict on that session teaches a lesson the next task finds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

aep = pytest.importorskip("aep")

from tests.serving import serving  # noqa: E402

SCOPE = {"app": "support", "project": "refunds"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with serving(tmp_path / "served.db", "--dev") as url:
        yield url


def run_events() -> list[dict[str, object]]:
    def make(type: str, payload: dict[str, object], **extra: object) -> dict[str, object]:
        found: dict[str, object] = aep.create_event(
            source="agent://refund-agent", type=type, session_id="ses-sdk", trace_id="trc-sdk", payload=payload, **extra
        )
        return found

    return [
        make("task.created", {"task": "Refund ticket 42 is stuck in pending"}),
        make("tool.called", {"tool_name": "run_refund_check", "call_id": "c1", "arguments": {"strategy": "retry"}}),
        make("error.raised", {"call_id": "c1", "error_type": "LockHeldError", "error": "refund lock is held"}),
        make("tool.called", {"tool_name": "run_refund_check", "call_id": "c2", "arguments": {"strategy": "wait"}}),
        make("tool.result", {"call_id": "c2", "output": "issued"}),
        make("task.completed", {"output": "Refund issued."}),
    ]


def test_the_aep_sdk_emits_to_afteraction_and_reads_back(server: str) -> None:
    events = run_events()
    with aep.AEPClient(server_url=server, max_retries=0) as client:
        answers = [client.emit(event) for event in events]
        assert [a["accepted"] for a in answers] == [True] * len(events)
        assert [a["duplicate"] for a in answers] == [False] * len(events)
        assert client.emit(events[0])["duplicate"] is True  # a retried event is deduplicated

        sessions = client.get_sessions()["sessions"]
        assert [s["session_id"] for s in sessions] == ["ses-sdk"]
        stored = client.get_session_events("ses-sdk")["events"]
        assert [e["id"] for e in stored] == [e["id"] for e in events]
        assert stored[0]["payload"] == {"task": "Refund ticket 42 is stuck in pending"}
        assert client.get_session_tree("ses-sdk")["tree"]["session_id"] == "ses-sdk"

        with pytest.raises(aep.AEPValidationError):
            client.emit({**events[0], "id": "bad-time", "time": "2026-01-01 10:00:00"})

    # the host judges the session with its own check; the next similar task gets the lesson
    with httpx.Client(base_url=server, timeout=10) as http:
        verdict = {"scope": SCOPE, "evidence": [{"id": "refund-issued", "passed": True}]}
        learned = http.post("/sessions/ses-sdk/verdict", json=verdict)
        assert learned.status_code == 201, learned.text
        block = http.post("/experience/block", json={"task": "refund stuck in pending again", "scope": SCOPE})
        text = block.json()["block"]
        assert "Refund ticket 42 is stuck in pending" in text
        assert "LockHeldError" in text  # the retry of the failed tool read as a second attempt
