"""PostgreSQL-specific behaviour: migrations, refusing what it cannot open, atomic writes,
row-level security by tenant, 16 concurrent writers; and ``open_store``."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import psycopg
import pytest

from afteraction.errors import ConflictError, StoreError
from afteraction.store import Store, open_store
from afteraction.store.postgres import PostgresStore, row
from afteraction.store.postgres_schema import (
    EVENT_COUNTS,
    EVENTS,
    KEYS_TABLE,
    MIGRATIONS,
    MIGRATIONS_TABLE,
    SESSIONS,
    TABLE,
    TERMS,
    VECTOR_MODELS,
    VECTORS,
    migrate,
)
from afteraction.store.postgres_service_schema import OTLP_SPANS
from tests.conformance.builders import NOW, SCOPE, experience, scoped
from tests.pg import Cluster

pytestmark = pytest.mark.postgres

GLOBEX = scoped(SCOPE, tenant="globex")


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(pg_url)
    yield opened
    opened.close()


def connect(url: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(url, autocommit=True)


# opening and migrating


def test_a_blank_database_migrates_to_the_expected_schema(pg_url: str) -> None:
    PostgresStore(pg_url).close()
    with connect(pg_url) as db:
        tables = db.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1").fetchall()
        indexes = db.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s ORDER BY 1", (TABLE,)).fetchall()
        applied = db.execute(f"SELECT name FROM {MIGRATIONS_TABLE} ORDER BY name").fetchall()
        for table in (TABLE, TERMS, VECTORS, OTLP_SPANS):  # every table of tenants' rows: row-level security, forced
            flags = "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = %s"
            security = db.execute(flags, (table,))
            policies = db.execute("SELECT policyname, cmd FROM pg_policies WHERE tablename = %s ORDER BY 1", (table,))
            assert security.fetchone() == (True, True)
            assert [cmd for _, cmd in policies.fetchall()] == ["DELETE", "INSERT", "SELECT", "UPDATE"]
    ours = [KEYS_TABLE, TABLE, MIGRATIONS_TABLE, EVENTS, SESSIONS, EVENT_COUNTS, TERMS, VECTOR_MODELS, VECTORS]
    ours.append(OTLP_SPANS)
    assert sorted(tables) == sorted((name,) for name in ours)
    assert [name for (name,) in indexes] == [
        f"{TABLE}_pkey",
        f"{TABLE}_scope_created",
        f"{TABLE}_tenant_id_key",
    ]
    assert [name for (name,) in applied] == [m.__name__ for m in MIGRATIONS]


def test_an_old_database_upgrades_without_losing_a_row(pg_url: str) -> None:
    originals = [experience(f"exp-{i}") for i in range(5)] + [experience("g-1", scope=GLOBEX)]
    with connect(pg_url) as db:
        migrate(db, "test", MIGRATIONS[:1])  # before row-level security
        columns = 'tenant, id, app, project, team, agent, "user", task_id, task, summary, lesson, status, ' + (
            "confidence, created_at, updated_at, expires_at, revision, data, task_terms, summary_terms, lesson_terms"
        )
        marks = ", ".join(["%s"] * 21)
        with db.cursor() as cur:
            cur.executemany(f"INSERT INTO {TABLE} ({columns}) VALUES ({marks})", [row(e) for e in originals])
    store = PostgresStore(pg_url)
    try:
        assert sorted(e.id for e in store.iter_all()) == sorted(e.id for e in originals)
        assert store.get(SCOPE, "exp-3") == originals[3]
        assert [c.experience.id for c in store.search_text(GLOBEX, ["refund"], now=originals[0].created_at)] == ["g-1"]
    finally:
        store.close()


def test_a_database_at_m006_upgrades_to_the_one_call_put_without_losing_a_row(pg_url: str) -> None:
    before = MIGRATIONS[: [m.__name__ for m in MIGRATIONS].index("m007_put_function")]
    originals = [experience(f"exp-{i}") for i in range(3)] + [experience("g-1", scope=GLOBEX)]
    with connect(pg_url) as db:
        migrate(db, "test", before)
        columns = 'tenant, id, app, project, team, agent, "user", task_id, task, summary, lesson, status, ' + (
            "confidence, created_at, updated_at, expires_at, revision, data, task_terms, summary_terms, lesson_terms"
        )
        for original in originals:  # as the store at m006 wrote them: the tenant set, then the row
            with db.transaction():
                db.execute("SELECT set_config('afteraction.tenant', %s, true)", (original.scope.tenant,))
                db.execute(f"INSERT INTO {TABLE} ({columns}) VALUES ({', '.join(['%s'] * 21)})", row(original))
    store = PostgresStore(pg_url)
    try:
        assert sorted(e.id for e in store.iter_all()) == sorted(e.id for e in originals)
        assert store.put(originals[1]) is False  # still there: not inserted twice
        assert store.put(experience("new", scope=GLOBEX)) is True
        now = originals[0].created_at
        assert sorted(c.experience.id for c in store.search_text(GLOBEX, ["refund"], now=now)) == ["g-1", "new"]
        assert store.get(SCOPE, "exp-2") == originals[2] and store.count(SCOPE) == 3
    finally:
        store.close()


def test_a_newer_schema_asks_to_upgrade(pg_url: str) -> None:
    PostgresStore(pg_url).close()
    with connect(pg_url) as db:
        db.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name) VALUES ('m999_from_the_future')")
    with pytest.raises(StoreError, match=r"newer than this afteraction understands.*upgrade afteraction"):
        PostgresStore(pg_url)


def test_a_table_of_ours_without_migrations_is_refused(pg_url: str) -> None:
    with connect(pg_url) as db:
        db.execute(f"CREATE TABLE {TABLE} (x int)")
    with pytest.raises(StoreError, match="did not create"):
        PostgresStore(pg_url)


def test_a_role_without_create_privilege_is_told_what_to_grant(pg_cluster: Cluster, pg_url: str) -> None:
    with connect(pg_cluster.admin_url) as db:
        db.execute("DROP ROLE IF EXISTS afteraction_reader")
        db.execute("CREATE ROLE afteraction_reader LOGIN")
    name = psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]
    with pytest.raises(StoreError, match="grant it CREATE"):
        PostgresStore(pg_cluster.url(str(name), "afteraction_reader"))


def test_a_wrong_url_is_a_store_error_without_the_password(pg_cluster: Cluster) -> None:
    url = f"postgresql://afteraction_app:secret@/no_such_database?host={pg_cluster.root}"
    with pytest.raises(StoreError, match="cannot open the PostgreSQL store") as raised:
        PostgresStore(url)
    assert "no_such_database" in str(raised.value)
    assert "secret" not in str(raised.value) and "***" in str(raised.value)
    with pytest.raises(StoreError, match="cannot open"):
        PostgresStore("postgresql://nobody@/x?host=/nonexistent-socket-directory")


def test_open_store_picks_postgres(pg_url: str) -> None:
    for url in (pg_url, pg_url.replace("postgresql://", "postgres://"), pg_url.replace("://", "+psycopg://", 1)):
        store = open_store(url)
        assert isinstance(store, PostgresStore) and isinstance(store, Store)
        store.close()


# writes


def test_a_failed_put_many_inserts_none_and_keeps_what_was_stored(store: PostgresStore, pg_url: str) -> None:
    store.put(experience("kept"))
    with connect(pg_url) as db:
        db.execute(
            "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN IF NEW.id = 'boom' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$"
        )
        db.execute(f"CREATE TRIGGER boom BEFORE INSERT ON {TABLE} FOR EACH ROW EXECUTE FUNCTION boom()")
    with pytest.raises(StoreError, match="boom"):
        store.put_many([experience("new-1"), experience("new-2", scope=GLOBEX), experience("boom")])
    assert [e.id for e in store.iter_all()] == ["kept"]


def test_a_closed_store_raises_store_error(store: PostgresStore) -> None:
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.count(SCOPE)


# row-level security


def test_a_crafted_query_as_one_tenant_cannot_read_count_or_dedup_against_another(
    store: PostgresStore, pg_url: str
) -> None:
    store.put_many([experience("shared-id", scope=GLOBEX), experience("g-2", scope=GLOBEX)])
    store.put(experience("a-1"))
    with connect(pg_url) as db, db.transaction():  # the table's owner: FORCE applies to it too
        db.execute("SELECT set_config('afteraction.tenant', 'acme', true)")
        assert db.execute(f"SELECT tenant, id FROM {TABLE} ORDER BY id").fetchall() == [("acme", "a-1")]
        assert db.execute(f"SELECT count(*) FROM {TABLE} WHERE tenant = 'globex'").fetchone() == (0,)
        assert db.execute(f"SELECT count(*) FROM {TABLE}").fetchone() == (1,)
        # nor through the stems the search reads: which stems another tenant's records hold
        assert db.execute(f"SELECT count(*) FROM {TERMS} WHERE tenant <> 'acme'").fetchone() == (0,)
        assert db.execute(f"SELECT DISTINCT tenant FROM {TERMS}").fetchall() == [("acme",)]
        assert db.execute(f"DELETE FROM {TERMS} WHERE tenant = 'globex'").rowcount == 0
        assert db.execute(f"UPDATE {TABLE} SET lesson = 'x' WHERE tenant = 'globex'").rowcount == 0
        assert db.execute(f"DELETE FROM {TABLE} WHERE tenant = 'globex'").rowcount == 0
        # dedup is by (tenant, id): globex's "shared-id" does not stop acme's
        values = row(experience("shared-id"))
        columns = "tenant, id, app, project, task_id, task, summary, lesson, status, confidence, created_at, "
        columns += "revision, data, task_terms, summary_terms, lesson_terms"
        picked = (*values[:4], *values[7:14], *values[16:])
        sql = f"INSERT INTO {TABLE} ({columns}) VALUES ({', '.join(['%s'] * 16)}) ON CONFLICT (tenant, id) DO NOTHING"
        assert db.execute(sql, picked).rowcount == 1
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"), db.transaction():
            db.execute(sql, ("globex", *picked[1:]))  # nor write as another tenant
    with connect(pg_url) as db:  # no tenant set: nothing at all
        assert db.execute(f"SELECT count(*) FROM {TABLE}").fetchone() == (0,)
    assert store.count(GLOBEX) == 2 and store.count(SCOPE) == 2


# concurrency


def test_sixteen_concurrent_writers_lose_and_duplicate_nothing(pg_url: str) -> None:
    writers, each = 16, 25
    stores = [PostgresStore(pg_url, max_size=2) for _ in range(writers)]  # sixteen hosts
    stores[0].put(experience("counter"))
    updates = [0] * writers
    errors: list[BaseException] = []

    def work(n: int) -> None:
        store = stores[n]
        try:
            for i in range(each):
                store.put(experience(f"w{n:02d}-{i:03d}"))
                store.put(experience(f"common-{i:03d}"))  # every writer inserts these: kept once
                if i % 4 == 0:
                    store.put_many([experience(f"batch-{n:02d}-{i}-{k}", scope=GLOBEX) for k in range(5)])
                while True:
                    current = store.get(SCOPE, "counter")
                    assert current is not None
                    try:
                        store.update(current, expected_revision=current.revision)
                    except ConflictError:
                        continue
                    updates[n] += 1
                    break
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        ids = [e.id for e in stores[0].iter_all("acme")]
        assert len(ids) == len(set(ids)) == 1 + writers * each + each
        assert stores[0].count(GLOBEX) == writers * len(range(0, each, 4)) * 5
        counter = stores[0].get(SCOPE, "counter")
        assert counter is not None and counter.revision == 1 + sum(updates) == 1 + writers * each
    finally:
        for store in stores:
            store.close()


def test_an_unreadable_record_is_a_store_error_when_read_and_in_the_hits(store: PostgresStore, pg_url: str) -> None:
    # Search candidates are decoded only as far as ranking reads them (store/records.py): a record whose
    # JSON cannot be read still ranks by its columns, and fails as a StoreError once anything else is read.
    store.put_many([experience("good", task="Refund ticket is stuck"), experience("bad", task="Refund ticket is late")])
    with connect(pg_url) as db, db.transaction():
        db.execute("SELECT set_config('afteraction.tenant', %s, true)", (SCOPE.tenant,))
        db.execute(f"UPDATE {TABLE} SET data = '{{not json' WHERE id = 'bad'")
    found = {c.experience.id: c.experience for c in store.search_text(SCOPE, ["refund", "ticket"], now=NOW)}
    assert set(found) == {"good", "bad"} and found["bad"].scope == SCOPE
    with pytest.raises(StoreError, match="cannot be read"):
        _ = found["bad"].lesson
    assert found["good"].lesson == experience("good").lesson
