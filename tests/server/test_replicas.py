"""Stateless replicas over one PostgreSQL: two apps, each with its own store and writer,
share events, dedup (one 202 for an id), sessions, trees and counts."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from starlette.testclient import TestClient

from afteraction.server import create_app
from afteraction.store.events import open_events
from tests.server.conftest import LIMITS, tenant_from_header
from tests.server.test_ingest import event

pytestmark = pytest.mark.postgres


@pytest.fixture
def replicas(pg_url: str) -> Iterator[tuple[TestClient, TestClient]]:
    stores = [open_events(pg_url), open_events(pg_url)]
    apps = [create_app(store, tenant=tenant_from_header, limits=LIMITS, cursor_key=b"k" * 32) for store in stores]
    with TestClient(apps[0]) as one, TestClient(apps[1]) as two:
        yield one, two
    for store in stores:
        store.close()


def test_two_replicas_share_one_database(replicas: tuple[TestClient, TestClient]) -> None:
    one, two = replicas
    assert one.post("/events", json=event("e1", session_id="root")).status_code == 202
    assert two.post("/events", json=event("e1", session_id="root")).status_code == 200  # the other's duplicate
    assert two.post("/events", json=event("e1", session_id="root"), headers={"x-test-tenant": "b"}).status_code == 202
    assert two.post("/events", json=event("e2", session_id="kid", parent_session_id="root")).status_code == 202
    tree = one.get("/sessions/root/tree").json()["tree"]
    assert [child["session_id"] for child in tree["children"]] == ["kid"]
    page = one.get("/sessions", params={"limit": 1}).json()
    assert two.get("/sessions", params={"cursor": page["next_cursor"]}).status_code == 200  # a shared cursor key
    assert two.get("/metrics").json()["stored"]["events"] == 2


def test_the_same_events_sent_to_both_at_once_are_stored_once(replicas: tuple[TestClient, TestClient]) -> None:
    one, two = replicas
    batch = [event(f"e{i}", session_id=f"s{i % 5}") for i in range(100)]
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda client: client.post("/events/batch", json=batch), (one, two)))
    added = [answer.json()["added"] for answer in answers]
    assert sum(added) == 100
    stats = one.get("/metrics").json()["stored"]
    assert stats["events"] == 100 and stats["sessions"] == 5
    assert sum(s["events"] for s in one.get("/sessions").json()["sessions"]) == 100
