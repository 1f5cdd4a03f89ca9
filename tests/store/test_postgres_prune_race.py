"""``prune`` on PostgreSQL against a writer that adds to a session it is deleting: an event acknowledged with a
time inside the retention window is never deleted. The prune reads the ended sessions, then deletes them; a
session that took a new event in between keeps it (the cutoff is checked again by the DELETE itself).

The writer is held, with its new event inserted and the session's row updated, by a trigger that waits for an
advisory lock the test holds; the test lets it commit once the prune waits for that row."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone

import psycopg
import pytest

from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_events import PostgresEvents
from afteraction.store.postgres_schema import EVENT_COUNTS, SESSIONS
from tests.pg import Cluster
from tests.store.test_events import event

pytestmark = pytest.mark.postgres

OLD = "2026-01-01T10:00:00Z"
NEW = "2026-03-01T10:00:00Z"
CUTOFF = datetime(2026, 2, 1, tzinfo=timezone.utc)
GATE = 7_310_042  # the advisory lock the held writer waits for


@pytest.fixture
def events(pg_url: str) -> Iterator[PostgresEvents]:
    opened = PostgresEvents(PostgresStore(pg_url))
    yield opened
    opened.close()


def _hold_writers(url: str) -> None:
    """Every later write of events waits, after its session rows are updated, for the advisory lock ``GATE``."""
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(
            "CREATE FUNCTION gate() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN PERFORM pg_advisory_xact_lock({GATE}); RETURN NULL; END $$"
        )
        db.execute(f"CREATE TRIGGER gate AFTER INSERT ON {EVENT_COUNTS} FOR EACH STATEMENT EXECUTE FUNCTION gate()")


def _waiting(admin: psycopg.Connection[tuple[object, ...]], query: str) -> bool:
    found = admin.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s", (f"%{query}%",)
    ).fetchone()
    return found is not None and int(str(found[0])) > 0


def _until(admin: psycopg.Connection[tuple[object, ...]], query: str) -> None:
    deadline = time.monotonic() + 20
    while not _waiting(admin, query):
        assert time.monotonic() < deadline, f"nothing waited on a lock in {query!r}"
        time.sleep(0.01)


@pytest.mark.parametrize("tenant", ["acme", None])
def test_a_prune_keeps_an_event_a_writer_added_while_it_ran(
    events: PostgresEvents, pg_cluster: Cluster, pg_url: str, tenant: str | None
) -> None:
    events.add_many("acme", [event("old-1", OLD, session="busy"), event("old-2", OLD, session="idle")])
    _hold_writers(pg_url)
    admin_url = pg_cluster.url(str(psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]), "postgres")
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute("SELECT pg_advisory_lock(%s)", (GATE,))
        added: list[list[bool]] = []
        writer = threading.Thread(target=lambda: added.append(events.add_many("acme", [event("new-1", NEW, "busy")])))
        writer.start()
        _until(admin, f"INSERT INTO {EVENT_COUNTS}")  # the writer holds the session's row, its event inserted
        pruned: list[int] = []
        pruner = threading.Thread(target=lambda: pruned.append(events.prune(tenant, CUTOFF)))
        pruner.start()
        _until(admin, f"DELETE FROM {SESSIONS}")  # the prune has read "busy" as ended and waits for its row
        admin.execute("SELECT pg_advisory_unlock(%s)", (GATE,))
        writer.join(20)
        pruner.join(20)
    assert added == [[True]]  # acknowledged
    assert pruned == [1]  # "idle" only
    assert [json.loads(e.data)["id"] for e in events.events("acme", "busy", limit=10)] == ["old-1", "new-1"]
    assert events.session("acme", "idle") is None
    busy = events.session("acme", "busy")
    assert busy is not None and busy.events == 2
    assert events.stats("acme").events == 2
