"""DELETE /sessions/{id}: the caller's session goes with its events, its tree and its share of
/metrics; another tenant's same session id stays; a retry answers 0; a read-only key is refused.
On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.server.keyed import Keyed, bearer, keyed
from tests.server.test_ingest import event


@pytest.fixture
def server(database: str) -> Iterator[Keyed]:
    with keyed(database) as found:
        yield found


def test_deleting_a_session_takes_its_events_tree_and_metrics_in_the_callers_tenant_only(server: Keyed) -> None:
    acme, globex = bearer(server.token("acme")), bearer(server.token("globex"))
    http = server.client
    for headers in (acme, globex):
        batch = [
            event("1", session_id="parent"),
            event("2", session_id="parent", type="tool.called"),
            event("3", session_id="child", parent_session_id="parent", type="tool.called"),
        ]
        assert http.post("/events/batch", json=batch, headers=headers).status_code == 202
    answer = http.delete("/sessions/parent", headers=acme)
    assert answer.status_code == 200 and answer.json() == {"deleted": 1}
    assert [s["session_id"] for s in http.get("/sessions", headers=acme).json()["sessions"]] == ["child"]
    assert http.get("/sessions/parent/tree", headers=acme).status_code == 404
    assert http.get("/sessions/parent/events", headers=acme).status_code == 404
    stored = http.get("/metrics", headers=acme).json()["stored"]
    assert (stored["events"], stored["sessions"], stored["events_by_type"]) == (1, 1, {"tool.called": 1})
    assert http.delete("/sessions/parent", headers=acme).json() == {"deleted": 0}  # a retry is no error
    assert http.get("/metrics", headers=globex).json()["stored"]["events"] == 3  # the same id elsewhere stays
    assert len(http.get("/sessions/parent/events", headers=globex).json()["events"]) == 2
    again = http.post("/events", json=event("1", session_id="parent"), headers=acme)  # deleted: stored again
    assert again.status_code == 202 and again.json()["duplicate"] is False


def test_a_key_without_the_write_scope_cannot_delete(server: Keyed) -> None:
    writer, reader = bearer(server.token("acme")), bearer(server.token("acme", scopes="read"))
    server.client.post("/events", json=event("1"), headers=writer)
    answer = server.client.delete("/sessions/ses-1", headers=reader)
    assert answer.status_code == 403 and "'write' scope" in answer.text
    assert server.client.delete("/sessions/ses-1").status_code == 401
    assert len(server.client.get("/sessions", headers=reader).json()["sessions"]) == 1
