"""Ingest at its edges: NDJSON lines end at ``\\n`` only, and an event timed more than 24 hours past the
server's clock is refused (an OTLP span is kept, its times capped), so a sender's clock cannot keep
its sessions out of the retention window.

Before: NDJSON was split wherever ``str.splitlines`` splits (U+2028, U+2029, U+0085, form feed…),
so an event whose text held a raw U+2028 became two broken "events" (and was charged as two); and an
event timed 9999-12-31 was stored, its session never pruned by ``events prune --older-than``."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from starlette.testclient import TestClient

from afteraction.server.offload import INLINE_BYTES
from afteraction.store.events import EventStore
from tests.server.test_ingest import event
from tests.server.test_otlp import JSON_TYPE, span, trace_request

NDJSON = {"content-type": "application/x-ndjson"}


def _at(delta: timedelta) -> str:
    return (datetime.now(timezone.utc) + delta).strftime("%Y-%m-%dT%H:%M:%SZ")


def _stored_tasks(client: TestClient, session: str) -> list[str]:
    answer = client.get(f"/sessions/{session}/events")
    assert answer.status_code == 200, answer.text
    return [item["payload"]["task"] for item in answer.json()["events"]]


@pytest.mark.parametrize("pad", [0, INLINE_BYTES], ids=["on the loop", "in a worker"])
@pytest.mark.parametrize("mark", ["\u2028", "\u2029", "\x85"])  # raw in a JSON string (json.dumps escapes the rest)
def test_an_ndjson_line_ends_at_a_newline_only(client: TestClient, mark: str, pad: int) -> None:
    task = f"first para{mark}second para"
    first = json.dumps(event("evt-ls-1", payload={"task": task, "pad": "x" * pad}), ensure_ascii=False)
    second = json.dumps(event("evt-ls-2", payload={"task": "plain"}), ensure_ascii=False)
    body = (first + "\r\n" + second + "\n").encode()
    answer = client.post("/events/batch", content=body, headers=NDJSON)
    assert answer.status_code == 202, answer.text
    assert (answer.json()["received"], answer.json()["added"], answer.json()["rejected"]) == (2, 2, 0)
    assert _stored_tasks(client, "ses-1") == [task, "plain"]


def test_a_blank_line_of_a_carriage_return_is_skipped(client: TestClient) -> None:
    body = (json.dumps(event("evt-a")) + "\r\n\r\n  \r\n" + json.dumps(event("evt-b"))).encode()
    answer = client.post("/events/batch", content=body, headers=NDJSON)
    assert answer.status_code == 202, answer.text
    assert answer.json()["received"] == 2


def test_an_event_timed_more_than_a_day_ahead_is_refused_naming_time(client: TestClient) -> None:
    answer = client.post("/events", json=event("evt-future", time="9999-12-31T23:59:59Z"))
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error.startswith("time: is 9999-12-31T23:59:59Z, ")
    assert error.endswith(" min ahead of this server's clock (at most 24 hours)")
    late = client.post("/events", json=event("evt-late", time=_at(timedelta(hours=24, minutes=2))))
    assert late.status_code == 400  # never "24 hours ahead … (at most 24 hours)": the excess shows
    assert late.json()["error"].endswith(", 24 h 2 min ahead of this server's clock (at most 24 hours)")
    assert client.post("/events", json=event("evt-soon", time=_at(timedelta(hours=23)))).status_code == 202


def test_a_batch_refuses_only_its_events_from_the_future(client: TestClient) -> None:
    items = [event("evt-0"), event("evt-1", time=_at(timedelta(days=400))), event("evt-2", time=_at(timedelta(0)))]
    answer = client.post("/events/batch", json=items)
    assert answer.status_code == 202, answer.text
    found = answer.json()
    assert (found["added"], found["rejected"]) == (2, 1)
    assert found["results"][1]["errors"][0]["field"] == "events[1].time"
    assert "ahead of this server's clock (at most 24 hours)" in found["results"][1]["errors"][0]["message"]


def _nanos(when: datetime) -> str:
    return str(int(when.timestamp()) * 1_000_000_000)


def test_an_otlp_span_from_the_future_is_kept_with_its_times_capped(client: TestClient, events: EventStore) -> None:
    now = datetime.now(timezone.utc)
    root: dict[str, Any] = span("b7ad6b7169203331", "invoke_agent a", **{"gen_ai.operation.name": "invoke_agent"})
    root["startTimeUnixNano"] = _nanos(now + timedelta(days=3000))
    root["endTimeUnixNano"] = _nanos(now + timedelta(days=3001))
    answer = client.post("/v1/traces", json=trace_request(root), headers=JSON_TYPE)
    assert answer.status_code == 200, answer.text
    partial = answer.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "0"
    assert "1 span(s) timed more than 24 hours ahead of this server's clock" in partial["errorMessage"]
    sessions = events.sessions("dev", limit=10)
    assert len(sessions) == 1
    ended = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=sessions[0].ended_at)
    assert now + timedelta(hours=23) < ended <= datetime.now(timezone.utc) + timedelta(hours=24)
    # a year on, retention reaches it
    assert events.prune(None, now + timedelta(days=365)) == 1
