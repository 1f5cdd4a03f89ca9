"""An app over a fresh SQLite file, and a TestClient on it. The header ``x-test-tenant`` picks
the tenant (a test-only resolver; the real server has only ``dev`` so far)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.requests import Request
from starlette.testclient import TestClient

from afteraction.server import DEV_TENANT, Limits, create_app
from afteraction.store.events import EventStore, open_events

LIMITS = Limits(event_bytes=64 * 1024, batch_bytes=256 * 1024, batch_events=100, page=50)


def tenant_from_header(request: Request) -> str:
    return request.headers.get("x-test-tenant", DEV_TENANT)


@pytest.fixture
def events(tmp_path: Path) -> Iterator[EventStore]:
    found = open_events(str(tmp_path / "server.db"))
    yield found
    found.close()


@pytest.fixture
def client(events: EventStore) -> Iterator[TestClient]:
    app = create_app(events, tenant=tenant_from_header, limits=LIMITS)
    with TestClient(app, raise_server_exceptions=False) as found:
        yield found


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database for a test that runs on both backends: an SQLite file, or a PostgreSQL URL."""
    if request.param == "postgres":
        url: str = request.getfixturevalue("pg_url")
        return url
    return str(tmp_path / "server.db")
