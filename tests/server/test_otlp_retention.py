"""What the OTLP span buffer keeps, and for how long, seen through ``POST /v1/traces``, on SQLite and
PostgreSQL: a session deleted once its trace stopped exporting stays deleted (its late spans were
held; before, the tenant's next export placed them and brought it back with their data); a prune
takes the spans held since before its cutoff, which no export would ever place; a tenant's held
spans stay within the buffer's bytes (the oldest traces placed as they are); a long conversation
is held as the few things the mapping reads of it, and placed as it would have been whole."""

from __future__ import annotations

import json
import types
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
from starlette.testclient import TestClient

import afteraction.server.otlp as otlp
from afteraction.server import Limits, create_app
from afteraction.store.events import EventStore, open_events
from afteraction.store.spans import Bounds, SpanBuffer, open_spans
from tests.server.conftest import tenant_from_header
from tests.server.test_otlp import stored

T0 = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z
ACME = {"x-test-tenant": "acme"}


class Clock:
    """The route's clock (``otlp.time``), moved instead of waiting out the buffer's age."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    found = Clock()
    monkeypatch.setattr(otlp, "time", types.SimpleNamespace(time=found.time))
    return found


@pytest.fixture
def events(database: str) -> Iterator[EventStore]:
    found = open_events(database)
    yield found
    found.close()


@pytest.fixture
def client(events: EventStore, clock: Clock) -> Iterator[TestClient]:
    app = create_app(events, tenant=tenant_from_header, limits=Limits(page=500))
    with TestClient(app, raise_server_exceptions=False) as found:
        yield found


@pytest.fixture
def buffer(events: EventStore) -> SpanBuffer:
    return open_spans(events.store)


def span(trace: int, span_id: int, parent: int | None, operation: str, **attributes: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "traceId": f"{trace:032x}",
        "spanId": f"{span_id:016x}",
        "name": f"{operation} {attributes.get('gen_ai.agent.name', attributes.get('gen_ai.tool.name', ''))}",
        "kind": 1,
        "startTimeUnixNano": str(T0 + span_id * 1_000),
        "endTimeUnixNano": str(T0 + 1_000_000 - span_id),
        "attributes": [
            {"key": key, "value": {"stringValue": value}}
            for key, value in {"gen_ai.operation.name": operation, **attributes}.items()
        ],
    }
    if parent is not None:
        found["parentSpanId"] = f"{parent:016x}"
    return found


def export(client: TestClient, *spans: dict[str, Any], tenant: dict[str, str] = ACME) -> None:
    body = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}]}
    answer = client.post("/v1/traces", json=body, headers=tenant)
    assert answer.status_code == 200, answer.text


def held_bytes(buffer: SpanBuffer, tenant: str = "acme") -> int:
    return sum(summary.size for summary in buffer.summary(tenant))


def test_a_session_deleted_after_the_buffers_age_stays_deleted(
    client: TestClient, buffer: SpanBuffer, clock: Clock
) -> None:
    session = f"{1:032x}-{1:016x}"
    export(client, span(1, 1, None, "invoke_agent", **{"gen_ai.agent.name": "bot"}), span(1, 2, 1, "execute_tool"))
    late = span(1, 3, 2, "execute_tool", **{"gen_ai.tool.name": "late", "gen_ai.tool.call.arguments": '{"card": "x"}'})
    export(client, late)  # its parent (a tool call, no session of its own) was placed already: held until the age
    assert [s.spans for s in buffer.summary("acme")] == [1]
    clock.now += 3_600  # the trace stopped exporting long ago
    assert client.delete(f"/sessions/{session}", headers=ACME).json() == {"deleted": 1}
    assert buffer.summary("acme") == []  # its trace's held spans went with it
    export(client, span(2, 1, None, "invoke_agent", **{"gen_ai.agent.name": "other"}))  # the next, unrelated export
    assert client.get(f"/sessions/{session}/events", headers=ACME).status_code == 404
    sessions = client.get("/sessions", headers=ACME).json()["sessions"]
    assert [s["session_id"] for s in sessions] == [f"{2:032x}-{1:016x}"]


def test_a_prune_takes_the_spans_held_before_its_cutoff(
    client: TestClient, events: EventStore, buffer: SpanBuffer, clock: Clock
) -> None:
    export(client, span(3, 2, 9, "execute_tool", **{"gen_ai.tool.name": "orphan"}))  # its parent never comes
    assert [s.spans for s in buffer.summary("acme")] == [1]
    clock.now += 3_600
    assert events.prune(None, datetime.fromtimestamp(clock.now, timezone.utc)) == 0  # no session ended before
    assert buffer.summary("acme") == []
    export(client, span(2, 1, None, "invoke_agent", **{"gen_ai.agent.name": "other"}))
    assert [e.session_id for e in stored(client, "acme")] == [f"{2:032x}-{1:016x}"] * 2  # the orphan never placed


def test_a_tenants_held_spans_stay_within_the_buffers_bytes(
    client: TestClient, buffer: SpanBuffer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(otlp, "BOUNDS", Bounds(tenant_bytes=3 << 20))
    big = "A" * (1 << 20)  # a value the mapping cuts, counting what it cut: held whole
    for trace in range(1, 5):
        export(
            client, span(trace, 2, 9, "execute_tool", **{"gen_ai.tool.name": "t", "gen_ai.tool.call.arguments": big})
        )
        assert held_bytes(buffer) <= 3 << 20
    assert [s.trace_id for s in buffer.summary("acme")] == [f"{3:032x}", f"{4:032x}"]  # the oldest were placed
    placed = [e for e in stored(client, "acme") if e.type == "tool.called"]
    assert sorted(e.trace_id for e in placed) == [f"{1:032x}", f"{2:032x}"]
    assert all(e.payload["arguments"]["_raw"].endswith(f"…[cut {len(big) - 4096} chars]") for e in placed)


def _conversation(turns: int) -> str:
    messages = []
    for turn in range(turns):
        messages.append({"role": "user", "parts": [{"type": "text", "content": f"question {turn} " + "why " * 500}]})
        messages.append({"role": "assistant", "parts": [{"type": "text", "content": f"answer {turn} " + "so " * 500}]})
    return json.dumps(messages)


def test_a_long_conversation_is_held_small_and_placed_as_it_would_have_been_whole(
    client: TestClient, buffer: SpanBuffer
) -> None:
    root = span(5, 1, None, "invoke_agent", **{"gen_ai.agent.name": "bot"})
    models = [
        span(5, n, 1, "chat", **{"gen_ai.request.model": "m", "gen_ai.input.messages": _conversation(n * 5)})
        for n in range(2, 12)
    ]
    export(client, root, *models, tenant={"x-test-tenant": "whole"})
    export(client, *models)  # a batching exporter: the model spans end first
    assert 0 < held_bytes(buffer) < 40_000  # the conversations sent were over 1.5 MB
    export(client, root)
    assert buffer.summary("acme") == []

    def placed(tenant: str) -> list[dict[str, Any]]:
        return sorted((e.to_dict() for e in stored(client, tenant)), key=lambda e: str(e["id"]))

    assert placed("acme") == placed("whole")
    created = next(e for e in placed("acme") if e["type"] == "task.created")
    assert created["payload"]["task"].startswith("question 9 why")  # the first model call's last user message
