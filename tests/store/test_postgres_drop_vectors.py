"""Dropping a model's vectors in PostgreSQL, beyond the shared contract: the indexes that served
only them go (the tenant's own index with its vectors, the model's shared index and its recorded
dimension with the last of them), the model can come back at another dimension with a new index,
and a role that does not own the tables may list but not drop."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from afteraction.errors import ConfigError
from afteraction.store.base import StoredVector, VectorModelInfo
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_schema import MIGRATIONS_TABLE, TABLE, TERMS, VECTOR_MODELS, VECTORS
from afteraction.store.postgres_vectors import create_tenant_indexes, index_name, tenant_index_name
from tests.conformance.builders import NOW, SCOPE, experience, scoped
from tests.pg import Cluster

pytestmark = pytest.mark.postgres

MODEL = "old-model@1"
GLOBEX = scoped(SCOPE, tenant="globex")


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(pg_url)
    opened.put_many([experience(f"a{i}") for i in range(3)] + [experience(f"g{i}", scope=GLOBEX) for i in range(2)])
    vectors = [StoredVector("acme", f"a{i}", 1, MODEL, [1.0, float(i), 0.0]) for i in range(3)]
    opened.put_vectors(vectors + [StoredVector("globex", f"g{i}", 1, MODEL, [0.0, 1.0, float(i)]) for i in range(2)])
    yield opened
    opened.close()


def indexes(url: str) -> dict[str, str]:
    with psycopg.connect(url, autocommit=True) as db:
        rows = db.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", (VECTORS,)).fetchall()
    return dict(rows)


def recorded(url: str) -> list[tuple[str, int]]:
    with psycopg.connect(url, autocommit=True) as db:
        return [(m, int(d)) for m, d in db.execute(f"SELECT model, dimensions FROM {VECTOR_MODELS}").fetchall()]


def test_the_indexes_of_the_dropped_vectors_go_with_them(store: PostgresStore) -> None:
    with psycopg.connect(store.url, autocommit=True) as db:
        assert create_tenant_indexes(db, min_vectors=2) == [(MODEL, "acme"), (MODEL, "globex")]
    assert {index_name(MODEL), tenant_index_name(MODEL, "acme"), tenant_index_name(MODEL, "globex")} <= set(
        indexes(store.url)
    )
    assert store.drop_vectors(MODEL, tenant="globex") == 2
    present = indexes(store.url)
    assert tenant_index_name(MODEL, "globex") not in present  # globex's own index went with its vectors
    assert {index_name(MODEL), tenant_index_name(MODEL, "acme")} <= set(present)  # acme still searches
    assert recorded(store.url) == [(MODEL, 3)]
    assert [h.experience.id for h in store.search_vector(SCOPE, MODEL, [1.0, 0.0, 0.0], now=NOW, limit=1)] == ["a0"]

    assert store.drop_vectors(MODEL) == 3
    assert not any(MODEL in definition for definition in indexes(store.url).values())
    assert index_name(MODEL) not in indexes(store.url) and recorded(store.url) == []


def test_a_dropped_model_comes_back_at_another_dimension_with_a_new_index(store: PostgresStore) -> None:
    assert store.drop_vectors(MODEL) == 5
    assert store.put_vectors([StoredVector("acme", "a1", 1, MODEL, [0.0, 0.0, 0.0, 1.0, 0.0])]) == 1
    assert "vector(5)" in indexes(store.url)[index_name(MODEL)]
    assert recorded(store.url) == [(MODEL, 5)]
    assert store.vector_models() == [VectorModelInfo(MODEL, 5, 1, 1)]
    assert [h.experience.id for h in store.search_vector(SCOPE, MODEL, [0, 0, 0, 1.0, 0], now=NOW)] == ["a1"]


def test_a_role_that_does_not_own_the_tables_may_list_but_not_drop(
    pg_cluster: Cluster, pg_url: str, store: PostgresStore
) -> None:
    database = psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
        db.execute("DROP ROLE IF EXISTS afteraction_lister")
        db.execute("CREATE ROLE afteraction_lister LOGIN NOSUPERUSER NOBYPASSRLS")
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(f"GRANT SELECT, INSERT, UPDATE ON {TABLE}, {VECTORS} TO afteraction_lister")
        db.execute(f"GRANT DELETE ON {TABLE} TO afteraction_lister")
        db.execute(f"GRANT SELECT, INSERT, DELETE ON {TERMS} TO afteraction_lister")
        db.execute(f"GRANT SELECT ON {MIGRATIONS_TABLE} TO afteraction_lister")
        db.execute(f"GRANT SELECT, INSERT ON {VECTOR_MODELS} TO afteraction_lister")
    app = PostgresStore(pg_cluster.url(database, "afteraction_lister"))
    try:
        assert app.vector_models() == [VectorModelInfo(MODEL, 3, 5, 5)]
        assert app.vector_models(tenant="globex") == [VectorModelInfo(MODEL, 3, 2, 2)]
        for tenant in (None, "acme"):
            with pytest.raises(ConfigError, match=r"needs the owner of afteraction_vectors.*as the tables' owner"):
                app.drop_vectors(MODEL, tenant=tenant)
        assert store.vector_models() == [VectorModelInfo(MODEL, 3, 5, 5)]  # nothing dropped
        assert index_name(MODEL) in indexes(pg_url)
    finally:
        app.close()
        with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
            db.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
            db.execute("DROP ROLE IF EXISTS afteraction_lister")
