"""PostgreSQL vectors beyond the shared contract: the HNSW index of each model exists and the
application role's searches really use it under row-level security (EXPLAIN), its results match
an exact search, a large tenant's own index (an opt-in of the owner) serves that tenant's
searches, tenants and models stay apart, and a role that does not own the table searches
exactly until the owner creates the index."""

from __future__ import annotations

import json
import logging
import math
import random
from collections.abc import Iterator, Sequence

import psycopg
import pytest
from click.testing import CliRunner

import afteraction as aa
from afteraction.cli import main
from afteraction.errors import ConfigError, ValidationError
from afteraction.model import Scope, Status
from afteraction.store.admin import upgrade
from afteraction.store.base import StoredVector
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_schema import (
    EVENT_COUNTS,
    EVENTS,
    KEYS_TABLE,
    MIGRATIONS_TABLE,
    OTLP_SPANS,
    SESSIONS,
    TABLE,
    TERMS,
    VECTOR_MODELS,
    VECTORS,
)
from afteraction.store.postgres_vectors import (
    create_tenant_indexes,
    index_name,
    search_settings,
    search_sql,
    tenant_index_name,
)
from tests.conformance.builders import NOW, SCOPE, experience, scoped
from tests.hybrid_doubles import Letters
from tests.pg import Cluster

pytestmark = pytest.mark.postgres

MODEL = "clustered@1"
DIM = 32
GLOBEX = scoped(SCOPE, tenant="globex")
PER_TENANT = 1_000  # HNSW fixtures stay small: realistic (clustered) vectors, quick to index


def unit(values: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


class Clustered:
    """Unit vectors around 16 fixed centres, as embeddings of texts on a few topics are."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.centres = [[self.rng.gauss(0, 1) for _ in range(DIM)] for _ in range(16)]

    def __call__(self) -> list[float]:
        centre = self.rng.choice(self.centres)
        return unit([c + self.rng.gauss(0, 0.6) for c in centre])


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(pg_url)
    yield opened
    opened.close()


def fill(store: PostgresStore, vectors: Clustered) -> dict[tuple[str, str], list[float]]:
    """PER_TENANT records in acme (every tenth quarantined) and in globex, each with a vector."""
    acme = [
        experience(f"a{i}", status=Status.QUARANTINED if i % 10 == 0 else Status.VALIDATED) for i in range(PER_TENANT)
    ]
    store.put_many(acme + [experience(f"g{i}", scope=GLOBEX) for i in range(PER_TENANT)])
    stored = {(e.scope.tenant, e.id): vectors() for e in store.iter_all()}
    items = [StoredVector(tenant, id, 1, MODEL, v) for (tenant, id), v in stored.items()]
    assert sum(store.put_vectors(items[i : i + 500]) for i in range(0, len(items), 500)) == len(items)
    with psycopg.connect(store.url, autocommit=True) as db:
        db.execute("ANALYZE")
    return stored


def plan(url: str, scope: Scope, query: Sequence[float], limit: int = 10) -> str:
    """EXPLAIN ANALYZE of the search statement, run as ``url``'s role for ``scope``'s tenant."""
    with psycopg.connect(url) as db, psycopg.ClientCursor(db) as cur:
        cur.execute("SELECT set_config('afteraction.tenant', %s, true)", (scope.tenant,))
        for sql, params in search_settings(limit):
            cur.execute(sql, params)
        sql, params = search_sql(scope, MODEL, DIM, query, NOW, limit, 0.5)
        cur.execute("EXPLAIN (ANALYZE, COSTS OFF) " + cur.mogrify(sql, params))
        return "\n".join(line for (line,) in cur.fetchall())


def test_each_model_gets_an_hnsw_index_the_app_role_uses_under_row_level_security(store: PostgresStore) -> None:
    vectors = Clustered(1)
    fill(store, vectors)
    with psycopg.connect(store.url, autocommit=True) as db:
        role = db.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user").fetchone()
        definition = db.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", (index_name(MODEL),)).fetchone()
        forced = db.execute("SELECT relforcerowsecurity FROM pg_class WHERE relname = %s", (VECTORS,)).fetchone()
    assert role == (False, False) and forced == (True,)
    assert definition is not None
    assert f"hnsw (((embedding)::vector({DIM})) vector_cosine_ops) WHERE (model = '{MODEL}'::text)" in definition[0]
    explained = plan(store.url, SCOPE, vectors())
    assert f"Index Scan using {index_name(MODEL)} on {VECTORS}" in explained
    assert "Seq Scan on afteraction_vectors" not in explained.split("CTE exact")[0]


def test_results_match_an_exact_search(store: PostgresStore) -> None:
    vectors = Clustered(2)
    stored = fill(store, vectors)
    found = total = 0
    for _ in range(20):
        query = vectors()
        eligible = [id for (tenant, id) in stored if tenant == "acme" and int(id[1:]) % 10 != 0]
        exact = sorted(eligible, key=lambda id: -cosine(query, stored[("acme", id)]))[:10]
        hits = store.search_vector(SCOPE, MODEL, query, now=NOW, limit=10)
        assert [h.vector_score for h in hits] == sorted((h.vector_score for h in hits), reverse=True)
        for hit in hits:
            assert hit.vector_score == pytest.approx(cosine(query, stored[("acme", hit.experience.id)]), abs=1e-5)
            assert hit.text_score == 0.0 and hit.stems  # the ranker reads the stems, as for text hits
        found += len({h.experience.id for h in hits} & set(exact))
        total += len(exact)
    assert found / total >= 0.95


def recall(store: PostgresStore, stored: dict[tuple[str, str], list[float]], vectors: Clustered) -> float:
    """recall@10 of ``store``'s searches from SCOPE against the exact ranking, over 20 queries."""
    found = total = 0
    eligible = [id for (tenant, id) in stored if tenant == "acme" and int(id[1:]) % 10 != 0]
    for _ in range(20):
        query = vectors()
        exact = sorted(eligible, key=lambda id: -cosine(query, stored[("acme", id)]))[:10]
        hits = store.search_vector(SCOPE, MODEL, query, now=NOW, limit=10)
        assert [h.vector_score for h in hits] == sorted((h.vector_score for h in hits), reverse=True)
        found += len({h.experience.id for h in hits} & set(exact))
        total += len(exact)
    return found / total


def test_a_tenant_given_its_own_index_searches_it(store: PostgresStore) -> None:
    vectors = Clustered(6)
    stored = fill(store, vectors)
    store.put_many([experience("s0", scope=scoped(SCOPE, tenant="small"))])  # a tenant below the threshold
    store.put_vectors([StoredVector("small", "s0", 1, MODEL, vectors())])
    command = ["db", "index-tenants", "--db", store.url, "--min-vectors", str(PER_TENANT)]
    result = CliRunner().invoke(main, [*command, "--json"], catch_exceptions=False)
    assert (result.exit_code, json.loads(result.stdout)) == (0, {"indexed": [[MODEL, "acme"], [MODEL, "globex"]]})
    result = CliRunner().invoke(main, command, catch_exceptions=False)
    assert (result.exit_code, result.stdout) == (0, "nothing to build\n")  # each built once
    with psycopg.connect(store.url, autocommit=True) as db:
        assert create_tenant_indexes(db, min_vectors=PER_TENANT) == []
        names = {name for (name,) in db.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", (VECTORS,))}
    assert {index_name(MODEL), tenant_index_name(MODEL, "acme"), tenant_index_name(MODEL, "globex")} <= names
    assert tenant_index_name(MODEL, "small") not in names
    assert f"Index Scan using {tenant_index_name(MODEL, 'acme')} on {VECTORS}" in plan(store.url, SCOPE, vectors())
    assert f"Index Scan using {tenant_index_name(MODEL, 'globex')} on {VECTORS}" in plan(store.url, GLOBEX, vectors())
    small = scoped(SCOPE, tenant="small")
    assert f"Index Scan using {index_name(MODEL)} on {VECTORS}" in plan(store.url, small, vectors())
    assert recall(store, stored, vectors) >= 0.95
    assert [h.experience.id for h in store.search_vector(small, MODEL, vectors(), now=NOW)] == ["s0"]


def test_only_the_owner_may_give_a_tenant_its_own_index(pg_cluster: Cluster, pg_url: str) -> None:
    PostgresStore(pg_url).close()
    database = psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
        db.execute("DROP ROLE IF EXISTS afteraction_reader")
        db.execute("CREATE ROLE afteraction_reader LOGIN NOSUPERUSER NOBYPASSRLS")
    try:
        reader = pg_cluster.url(database, "afteraction_reader")
        with psycopg.connect(reader, autocommit=True) as db, pytest.raises(ConfigError, match="needs its owner"):
            create_tenant_indexes(db)
    finally:
        with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
            db.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
            db.execute("DROP ROLE IF EXISTS afteraction_reader")


def test_another_tenants_vectors_never_come_back(store: PostgresStore) -> None:
    vectors = Clustered(3)
    stored = fill(store, vectors)
    target = stored[("globex", "g7")]  # globex's vector, asked for from acme: acme's own nearest come back
    assert all(h.experience.scope.tenant == "acme" for h in store.search_vector(SCOPE, MODEL, target, now=NOW))
    assert store.search_vector(GLOBEX, MODEL, target, now=NOW, limit=1)[0].experience.id == "g7"
    lonely = Scope("initech", "support", "refunds")  # a tenant with no rows: the exact fallback finds nothing
    assert store.search_vector(lonely, MODEL, target, now=NOW) == []


def test_vectors_of_another_model_are_never_compared(store: PostgresStore) -> None:
    store.put_many([experience("a"), experience("b")])
    store.put_vectors([StoredVector("acme", "a", 1, MODEL, unit([1.0] * DIM))])
    store.put_vectors([StoredVector("acme", "b", 1, "wide@1", unit([1.0] * (DIM * 2)))])
    assert [h.experience.id for h in store.search_vector(SCOPE, MODEL, unit([1.0] * DIM), now=NOW)] == ["a"]
    assert [h.experience.id for h in store.search_vector(SCOPE, "wide@1", unit([1.0] * DIM * 2), now=NOW)] == ["b"]
    with pytest.raises(ValidationError, match=r"vectors\[0\]\.vector.*has 3 dimensions; 'clustered@1' .* 32"):
        store.put_vectors([StoredVector("acme", "b", 1, MODEL, unit([1.0, 2.0, 3.0]))])
    with pytest.raises(ValidationError, match=r"vectors\[1\]\.vector.*finite"):
        store.put_vectors(
            [
                StoredVector("acme", "a", 1, MODEL, unit([1.0] * DIM)),
                StoredVector("acme", "b", 1, MODEL, [math.nan] * DIM),
            ]
        )
    with psycopg.connect(store.url, autocommit=True) as db:
        names = {name for (name,) in db.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", (VECTORS,))}
    assert {index_name(MODEL), index_name("wide@1")} <= names


def test_a_role_that_does_not_own_the_table_searches_exactly_until_the_owner_builds_the_index(
    pg_cluster: Cluster, pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    PostgresStore(pg_url).close()  # migrated by the owner (the app role of the other tests)
    database = psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
        db.execute("DROP ROLE IF EXISTS afteraction_runner")
        db.execute("CREATE ROLE afteraction_runner LOGIN NOSUPERUSER NOBYPASSRLS")
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(f"GRANT SELECT, INSERT, UPDATE ON {TABLE}, {VECTORS} TO afteraction_runner")
        db.execute(f"GRANT DELETE ON {TABLE} TO afteraction_runner")
        db.execute(f"GRANT SELECT, INSERT, DELETE ON {TERMS} TO afteraction_runner")
        db.execute(f"GRANT SELECT ON {MIGRATIONS_TABLE} TO afteraction_runner")
        db.execute(f"GRANT SELECT, INSERT ON {VECTOR_MODELS} TO afteraction_runner")
        db.execute(f"GRANT SELECT, INSERT ON {EVENTS} TO afteraction_runner")
        db.execute(f"GRANT SELECT, INSERT, UPDATE ON {SESSIONS}, {EVENT_COUNTS}, {KEYS_TABLE} TO afteraction_runner")
        db.execute(f"GRANT SELECT, INSERT, DELETE ON {OTLP_SPANS} TO afteraction_runner")
    runner_url = pg_cluster.url(database, "afteraction_runner")
    vectors = Clustered(4)
    runner = PostgresStore(runner_url)
    try:
        with caplog.at_level(logging.WARNING, logger="afteraction"):
            fill(runner, vectors)
        assert "searched exactly" in caplog.text and "afteraction db upgrade" in caplog.text
        query = vectors()
        assert len(runner.search_vector(SCOPE, MODEL, query, now=NOW, limit=10)) == 10
        assert index_name(MODEL) not in plan(runner_url, SCOPE, query)
        assert upgrade(pg_url) == []  # as the owner: nothing to migrate, the missing index is built
        with psycopg.connect(pg_url, autocommit=True) as db:
            found = db.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", (index_name(MODEL),)).fetchone()
        assert found is not None
        assert f"Index Scan using {index_name(MODEL)}" in plan(runner_url, SCOPE, query)
        assert len(runner.search_vector(SCOPE, MODEL, query, now=NOW, limit=10)) == 10
        result = CliRunner().invoke(main, ["db", "index-tenants", "--db", runner_url], catch_exceptions=False)
        assert result.exit_code == 2 and "needs its owner: connect as the owner" in result.stderr
    finally:
        runner.close()
        with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
            db.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
            db.execute("DROP ROLE IF EXISTS afteraction_runner")


def test_memory_runs_hybrid_search_over_postgres(store: PostgresStore) -> None:
    mem = aa.Memory(store, embedder=Letters(), clock=lambda: NOW)
    mem.add_many([experience("refund"), experience("dns", task="Domain names do not resolve after the migration")])
    assert mem.wait_indexed(timeout=30)
    assert store.missing_vectors(Letters().model_id) == []  # written in the background, at the current revision
    hits = mem.search("Refund ticket is stuck in pending", scope=SCOPE, k=5)
    assert mem.channel_status.reason == "ok"
    assert hits and hits[0].experience.id == "refund"


def test_a_scope_seeing_fewer_rows_than_asked_is_ranked_exactly(store: PostgresStore) -> None:
    vectors = Clustered(5)
    fill(store, vectors)
    billing = scoped(SCOPE, project="billing")
    few = {f"b{i}": vectors() for i in range(5)}
    store.put_many([experience(id, scope=billing) for id in few])
    store.put_vectors([StoredVector("acme", id, 1, MODEL, v) for id, v in few.items()])
    query = vectors()
    hits = store.search_vector(billing, MODEL, query, now=NOW, limit=10)
    assert [h.experience.id for h in hits] == sorted(few, key=lambda id: -cosine(query, few[id]))
    exact_part = plan(store.url, billing, query).split("CTE exact")[1]
    assert "rows=5" in exact_part.split("\n")[1]  # the walk left fewer than asked: the exact ranking ran
