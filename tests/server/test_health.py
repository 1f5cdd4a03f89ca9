"""``/health`` and ``/ready`` answer as the AEP SDK's ``health()`` and ``ready()`` expect, and
``/ready`` says so when the store cannot answer."""

from __future__ import annotations

from starlette.testclient import TestClient

from afteraction.server import create_app
from afteraction.store.sqlite_events import SQLiteEvents
from tests.server.conftest import LIMITS


def test_health_and_ready(client: TestClient) -> None:
    assert client.get("/health").json() == {"status": "ok"}
    assert client.get("/ready").json() == {"status": "ready"}


def test_ready_fails_with_the_store(events: SQLiteEvents) -> None:
    with TestClient(create_app(events, limits=LIMITS), raise_server_exceptions=False) as http:
        events.store.close()
        answer = http.get("/ready")
        assert answer.status_code == 503
        assert answer.json()["errors"][0]["message"]
        assert http.get("/health").status_code == 200
