"""A deployment on PostgreSQL whose role lacks the DELETE grants (append-only, as docs/postgres.md allows) answers
each deletion with 501 and a message that says it does not delete and names the GRANT: not the 503 "try again
later" of an outage, which a client would retry for ever."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from starlette.testclient import TestClient

import afteraction as aa
from afteraction.errors import AppendOnlyError, StoreError
from afteraction.memory import Memory
from afteraction.server import create_app
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_events import PostgresEvents
from afteraction.store.postgres_privileges import PRIVILEGES
from afteraction.store.postgres_schema import EVENTS, SESSIONS, TABLE
from afteraction.testing import make_experience
from tests.pg import Cluster
from tests.server.conftest import LIMITS, tenant_from_header
from tests.store.test_events import event

pytestmark = pytest.mark.postgres

ROLE = "afteraction_append_only"
SCOPE = {"app": "support", "project": "refunds"}
ALICE = aa.Scope(tenant="acme", **SCOPE, user="alice")


@pytest.fixture
def http(pg_cluster: Cluster, pg_url: str) -> Iterator[TestClient]:
    headers = {"x-test-tenant": "acme"}
    with (
        serving_append_only(pg_cluster, pg_url, tenant_from_header) as app,
        TestClient(app, raise_server_exceptions=False, headers=headers) as client,
    ):
        yield client


@contextlib.contextmanager
def serving_append_only(pg_cluster: Cluster, pg_url: str, tenant: Any) -> Iterator[Any]:
    """The app over a role with README's grants and no DELETE, once a session and a lesson of acme are stored."""
    owner = PostgresEvents(PostgresStore(pg_url))
    owner.add_many("acme", [event("e1", session="s1")])
    Memory(owner.store, embedder=None).add(make_experience("Refund ticket 9 is stuck", id="exp_refund", scope=ALICE))
    owner.close()
    events = PostgresEvents(PostgresStore(pg_cluster.role(pg_url, ROLE, PRIVILEGES)))  # README's grants, no DELETE
    memory = Memory(events.store, embedder=None)
    try:
        yield create_app(events, tenant=tenant, limits=LIMITS, memory=memory)
    finally:
        memory.close()
        events.close()
        pg_cluster.drop(pg_url)
        with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
            db.execute(f"DROP ROLE IF EXISTS {ROLE}")


@pytest.mark.parametrize(
    ("path", "what", "table"),
    [
        ("/sessions/s1", "sessions", EVENTS),
        ("/experience/lessons/exp_refund", "lessons", TABLE),
        ("/experience/users/alice/lessons", "lessons", TABLE),
    ],
)
def test_a_deletion_the_deployment_does_not_do_is_501_naming_the_grant(
    http: TestClient, path: str, what: str, table: str
) -> None:
    answer = http.delete(path, params={**SCOPE, "user": "alice"} if "/lessons/" in path else None)
    assert answer.status_code == 501, answer.text
    message = answer.json()["errors"][0]["message"]
    assert message.startswith(f"this deployment does not delete {what}: its database role lacks DELETE")
    assert f"GRANT DELETE ON {table} TO <this role>" in message
    assert "postgresql://" not in message and "host=" not in message  # no database location for a client
    assert http.get("/sessions/s1/events").json()["events"]  # nothing deleted
    assert http.get("/experience/lessons/exp_refund", params={**SCOPE, "user": "alice"}).status_code == 200


def test_the_library_raises_it_as_a_store_error(pg_cluster: Cluster, pg_url: str, http: TestClient) -> None:
    events = PostgresEvents(
        PostgresStore(pg_cluster.url(str(psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]), ROLE))
    )
    try:
        with pytest.raises(AppendOnlyError, match=f"does not delete sessions.*GRANT DELETE ON {SESSIONS}") as raised:
            events.delete_sessions("acme", ["s1"])
        assert isinstance(raised.value, StoreError) and raised.value.status == 501
    finally:
        events.close()
