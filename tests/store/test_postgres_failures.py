"""A connection dropped mid-transaction: the store tries the operation again on another
connection, or fails with a StoreError, and nothing half-written is ever visible.

A trigger holds the store's transaction (``pg_sleep``) when it writes a chosen row, after the
rows before it in a ``put_many`` are inserted, for the first ``cuts`` attempts only (a
sequence counts them: it is not rolled back); another connection ends that backend each time
with ``pg_terminate_backend``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import psycopg
import pytest

from afteraction.errors import StoreError
from afteraction.store.postgres import RETRIES, PostgresStore
from afteraction.store.postgres_schema import TABLE, TERMS
from tests.conformance.builders import SCOPE, experience, scoped
from tests.pg import Cluster

pytestmark = pytest.mark.postgres

GLOBEX = scoped(SCOPE, tenant="globex")


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(pg_url, max_size=2)
    yield opened
    opened.close()


def cut(cluster: Cluster, url: str, id: str, cuts: int) -> Callable[[], int]:
    """Arm the trigger on row ``id`` for ``cuts`` attempts, and start the thread that ends each
    held backend; the function returned waits for it and gives how many it ended."""
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("CREATE SEQUENCE attempts")
        db.execute(
            "CREATE FUNCTION hold() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF NEW.id = '{id}' AND nextval('attempts') <= {cuts} THEN PERFORM pg_sleep(60); END IF; "
            "RETURN NEW; END $$"
        )
        db.execute(f"CREATE TRIGGER hold BEFORE INSERT OR UPDATE ON {TABLE} FOR EACH ROW EXECUTE FUNCTION hold()")

    ended = [0]

    def end_each() -> None:
        done, deadline = 0, time.monotonic() + 30
        with psycopg.connect(cluster.admin_url, autocommit=True) as db:
            while done < cuts and time.monotonic() < deadline:
                found = db.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep'"
                ).fetchall()
                done += sum(1 for (ended,) in found if ended)
                time.sleep(0.01)
        ended[0] = done

    ender = threading.Thread(target=end_each, daemon=True)
    ender.start()

    def wait() -> int:
        ender.join()
        return ended[0]

    return wait


def stored(url: str, cluster: Cluster) -> list[tuple[str, str]]:
    """Every (tenant, id) stored, and every tenant's postings, read as the superuser."""
    admin = cluster.url(str(psycopg.conninfo.conninfo_to_dict(url)["dbname"]), "postgres")
    with psycopg.connect(admin, autocommit=True) as db:
        rows = db.execute(f"SELECT tenant, id FROM {TABLE} ORDER BY 1, 2").fetchall()
        orphans = db.execute(
            f"SELECT count(*) FROM {TERMS} AS t WHERE NOT EXISTS (SELECT 1 FROM {TABLE} AS e WHERE e.pk = t.pk)"
        )
        assert orphans.fetchone() == (0,)
    return [(str(tenant), str(id)) for tenant, id in rows]


def test_put_many_cut_off_once_is_tried_again_and_stores_each_row_once(
    store: PostgresStore, pg_cluster: Cluster, pg_url: str
) -> None:
    store.put(experience("kept"))
    batch = [*(experience(f"new-{i}") for i in range(5)), experience("g-1", scope=GLOBEX)]
    ender = cut(pg_cluster, pg_url, "new-3", cuts=1)
    assert store.put_many(batch) == len(batch)
    assert ender() == 1
    expected = [("acme", "kept"), *(("acme", f"new-{i}") for i in range(5)), ("globex", "g-1")]
    assert stored(pg_url, pg_cluster) == sorted(expected)


def test_put_many_cut_off_every_time_fails_cleanly_and_stores_none_of_it(
    store: PostgresStore, pg_cluster: Cluster, pg_url: str
) -> None:
    store.put(experience("kept"))
    ender = cut(pg_cluster, pg_url, "new-3", cuts=RETRIES + 1)
    with pytest.raises(StoreError, match=r"PostgreSQL store .* failed: .*terminat"):
        store.put_many([experience(f"new-{i}") for i in range(5)])
    assert ender() == RETRIES + 1
    assert stored(pg_url, pg_cluster) == [("acme", "kept")]
    assert store.put(experience("new-0")) is True  # the pool has replaced its connections


def test_an_update_cut_off_once_is_applied_once(store: PostgresStore, pg_cluster: Cluster, pg_url: str) -> None:
    store.put(experience("exp-1"))
    changed = experience("exp-1", lesson="Take the lock with a timeout instead.")
    ender = cut(pg_cluster, pg_url, "exp-1", cuts=1)
    updated = store.update(changed, expected_revision=1)
    assert ender() == 1
    assert updated.revision == 2 and store.get(SCOPE, "exp-1") == updated


def test_a_put_cut_off_once_is_tried_again_and_stored_once(
    store: PostgresStore, pg_cluster: Cluster, pg_url: str
) -> None:
    ender = cut(pg_cluster, pg_url, "one", cuts=1)
    assert store.put(experience("one")) is True  # one call of afteraction_put, its own transaction
    assert ender() == 1
    assert stored(pg_url, pg_cluster) == [("acme", "one")]
    assert store.put(experience("one")) is False


def test_a_put_cut_off_every_time_fails_cleanly_and_stores_nothing(
    store: PostgresStore, pg_cluster: Cluster, pg_url: str
) -> None:
    ender = cut(pg_cluster, pg_url, "one", cuts=RETRIES + 1)
    with pytest.raises(StoreError, match=r"PostgreSQL store .* failed: .*terminat"):
        store.put(experience("one", scope=GLOBEX))
    assert ender() == RETRIES + 1
    assert stored(pg_url, pg_cluster) == []
    assert store.put(experience("one", scope=GLOBEX)) is True


def test_the_service_paths_take_another_connection_when_a_pooled_one_died(pg_cluster: Cluster, pg_url: str) -> None:
    """Events, sessions and keys run several statements per transaction (``_settled``); a connection the server
    ended while it sat in the pool is found dead by the first one, and another is taken: no request fails."""
    from afteraction.store.postgres_events import PostgresEvents
    from afteraction.store.postgres_keys import PostgresKeys

    store = PostgresStore(f"{pg_url}&pool_min_size=4&pool_max_size=4")
    try:
        events, keys = PostgresEvents(store), PostgresKeys(store)
        assert store._pool is not None
        store._pool.wait()  # all four connected
        with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
            ended = db.execute(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE pid <> pg_backend_pid() AND datname = %s",
                (str(psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]),),
            ).fetchone()
        assert ended is not None and ended[0] >= 1
        for _ in range(6):
            assert events.sessions("acme", limit=5) == []
            assert keys.find("key_nothing") is None
    finally:
        store.close()


def test_a_pool_with_no_free_connection_fails_after_its_timeout_once(pg_url: str) -> None:
    store = PostgresStore(f"{pg_url}&pool_min_size=1&pool_max_size=1&pool_timeout=0.5")
    try:
        assert store._pool is not None
        with store._pool.connection():  # the only connection, held
            started = time.monotonic()
            with pytest.raises(StoreError, match="couldn't get a connection"):
                store.get(SCOPE, "exp-1")
            assert time.monotonic() - started < 1.4  # not retried as a lost connection (three waits)
    finally:
        store.close()
