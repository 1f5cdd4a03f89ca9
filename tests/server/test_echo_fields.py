"""A body field the route does not take is named scrubbed and short in the 400."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from afteraction.memory import Memory
from afteraction.server import create_app
from afteraction.store.sqlite_events import SQLiteEvents
from tests.server.conftest import LIMITS, tenant_from_header
from tests.server.test_ingest import event

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def http(events: SQLiteEvents) -> Iterator[TestClient]:
    memory = Memory(events.store)
    app = create_app(events, tenant=tenant_from_header, limits=LIMITS, memory=memory)
    with TestClient(app, raise_server_exceptions=False, headers={"x-test-tenant": "acme"}) as found:
        yield found
    memory.close()


def test_an_unknown_body_field_holding_a_token_is_named_scrubbed(http: TestClient) -> None:
    body = {"query": "refund", "scope": {"app": "a", "project": "p"}, TOKEN: 1}
    answer = http.post("/experience/search", json=body)
    assert answer.status_code == 400
    (error,) = answer.json()["errors"]
    assert TOKEN not in answer.text and error["field"] == "[REDACTED:api_key]"
    assert "is not a field of this request" in error["message"]


@pytest.mark.parametrize(
    "bad", [{"agent_role": f"Authorization: Bearer {TOKEN}"}, {"agent_role": TOKEN}, {"type": TOKEN}]
)
def test_an_event_refused_for_a_value_holding_a_token_is_answered_scrubbed(
    http: TestClient, bad: dict[str, str]
) -> None:
    """The 400 of one event and the per-event error of a batch echo the refused value scrubbed:
    exporters and SDKs log these answers."""
    one = http.post("/events", json=event(**bad))
    batch = http.post("/events/batch", json=[event(id="e2", **bad)])
    assert one.status_code == 400 and TOKEN not in one.text and TOKEN[:12] not in one.text
    assert batch.status_code in (207, 400) and TOKEN not in batch.text and TOKEN[:12] not in batch.text
