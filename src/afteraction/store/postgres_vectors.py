"""Vectors in PostgreSQL (pgvector): the ``VectorStore`` half of ``PostgresStore``.

``VECTORS`` (``postgres_schema.m006``) holds one row per (record, model) with the revision it
was made from, under the same forced row-level security as the records. Its ``embedding``
column has no fixed dimension; pgvector indexes only a fixed one, so each model gets a partial
expression index, created when the model is first stored::

    CREATE INDEX … ON afteraction_vectors USING hnsw ((embedding::vector(384)) vector_cosine_ops)
    WHERE model = 'minilm@1'

A search orders by that same expression, so the planner can walk the index; the policies'
and the query's filters (tenant, scope, eligibility, current revision) are applied to what it
yields (the tenant also as a constant, ``v.tenant = 'acme'``, which lets the planner match a
tenant's own index, below), with pgvector's iterative scans (``hnsw.iterative_scan``) walking
on until ``limit`` rows pass or ``hnsw.max_scan_tuples`` are seen. When fewer than ``limit``
pass, the same statement ranks the caller's rows exactly (ordering by the uncast column, which
no index serves): few rows pass exactly when the caller sees few, so that is cheap.

The model's index holds every tenant's vectors, and a search drops the other tenants' after
reading them: a tenant holding a share ``s`` of them walks about ``1/s`` times as far as it
would in an index of its own. ``create_tenant_indexes`` (an opt-in of the owner) gives each
tenant of at least ``TENANT_INDEX_MIN`` vectors its own partial index (``WHERE model = … AND
tenant = …``), which the planner then walks for that tenant's searches, as the smaller one;
smaller tenants keep the shared index. At 1M lessons it halved the buffers a search reads for
a tenant of half the vectors (``docs/postgres.md``).

Creating an index needs the table's owner. An application role that is not the owner stores
and searches vectors all the same, by exact search, and the store logs once per model what to
run: ``afteraction db upgrade --db <owner URL>`` (or anything that opens the store as the owner)
creates the missing indexes (``create_vector_indexes``).
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import psycopg

from afteraction.errors import ConfigError, StoreError, ValidationError
from afteraction.model import ELIGIBLE_STATUSES, Experience, Scope
from afteraction.store._sql import Decoder, scope_predicate
from afteraction.store.base import Candidate, StoredVector, VectorModelInfo, check_names
from afteraction.store.postgres_errors import explain
from afteraction.store.postgres_schema import TABLE, VECTOR_MODELS, VECTORS
from afteraction.store.records import PG_COLUMNS
from afteraction.store.unreadable import read_past, say_unreadable

__all__ = [
    "MAX_INDEXED_DIMENSIONS",
    "PostgresVectors",
    "create_tenant_indexes",
    "create_vector_indexes",
    "index_name",
    "search_settings",
    "search_sql",
    "tenant_index_name",
]

log = logging.getLogger("afteraction")

MAX_INDEXED_DIMENSIONS = 2_000  # pgvector's HNSW limit for ``vector``: larger models are searched exactly
TENANT_INDEX_MIN = 100_000  # a tenant's vectors of a model from which ``create_tenant_indexes`` indexes them apart
#: The candidate list while building a tenant's own graph (pgvector's default 64): built with 64 at 1M, its recall@20
#: fell from 0.967 (shared index) to 0.948; with 128, 0.974, in twice the build time (docs/postgres.md).
TENANT_EF_CONSTRUCTION = 128
EF_SEARCH = 40  # pgvector's default candidate list; raised to ``limit`` when more are asked
_SET = "SELECT set_config(%s, %s, true)"
_ELIGIBLE = ", ".join(f"'{status.value}'" for status in sorted(ELIGIBLE_STATUSES, key=lambda s: s.value))
_PUT = f"""
    INSERT INTO {VECTORS} AS v (pk, model, tenant, revision, embedding)
    SELECT e.pk, n.model, e.tenant, e.revision, n.embedding::vector
    FROM unnest(%s::text[], %s::text[], %s::integer[], %s::text[]) AS n (id, model, revision, embedding)
    JOIN {TABLE} AS e ON e.tenant = %s AND e.id = n.id AND e.revision = n.revision
    ON CONFLICT (pk, model) DO UPDATE SET revision = EXCLUDED.revision, embedding = EXCLUDED.embedding
"""
_SEARCH = f"""
    WITH ann AS MATERIALIZED (
        SELECT v.pk, v.embedding::vector({{n}}) <=> %s::vector({{n}}) AS distance
        FROM {VECTORS} AS v JOIN {TABLE} AS e ON e.pk = v.pk AND e.revision = v.revision
        WHERE v.model = %s AND v.tenant = %s AND {{eligible}}
        ORDER BY v.embedding::vector({{n}}) <=> %s::vector({{n}}) LIMIT %s
    ),
    exact AS MATERIALIZED (
        SELECT v.pk, v.embedding <=> %s::vector AS distance
        FROM {TABLE} AS e JOIN {VECTORS} AS v ON v.pk = e.pk AND v.model = %s AND v.revision = e.revision
        WHERE (SELECT count(*) FROM ann) < %s AND {{eligible}}
        ORDER BY distance LIMIT %s
    ),
    found AS (
        SELECT pk, distance FROM ann WHERE (SELECT count(*) FROM ann) >= %s
        UNION ALL SELECT pk, distance FROM exact
    )
    SELECT {PG_COLUMNS}, 1 - f.distance, e.task_terms || ' ' || e.summary_terms || ' ' || e.lesson_terms
    FROM found AS f JOIN {TABLE} AS e ON e.pk = f.pk
    ORDER BY f.distance, e.id
"""
_MISSING = f"""
    SELECT e.tenant, e.id, e.data FROM {TABLE} AS e
    WHERE {{tenant}}(e.tenant, e.id) > (%s, %s) AND NOT EXISTS (
        SELECT 1 FROM {VECTORS} AS v WHERE v.pk = e.pk AND v.model = %s AND v.revision = e.revision
    )
    ORDER BY e.tenant, e.id LIMIT %s
"""


def index_name(model: str) -> str:
    """The name of ``model``'s HNSW index (model ids may hold any character)."""
    return f"{VECTORS}_hnsw_{hashlib.sha256(model.encode()).hexdigest()[:16]}"


def _literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(map(repr, vector)) + "]"


def _column(part: str) -> str:
    return f'e."{part}"'


def create_vector_indexes(db: psycopg.Connection[tuple[Any, ...]], models: Sequence[str] | None = None) -> list[str]:
    """Create the missing HNSW index of each model recorded in ``VECTOR_MODELS`` (of ``models``
    when given) whose dimension pgvector can index, when this role owns ``VECTORS``; the
    models still without one (all of them when the role is not the owner). ``db`` is in
    autocommit mode; each index is built in its own transaction (it blocks writes to the
    table while it builds: quick for a new model, minutes for a million vectors)."""
    with psycopg.ClientCursor(db) as cur:
        cur.execute(f"SELECT model, dimensions FROM {VECTOR_MODELS} ORDER BY model")
        wanted = [(m, int(d)) for m, d in cur.fetchall() if models is None or m in models]
        cur.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", (VECTORS,))
        present = {name for (name,) in cur.fetchall()}
        cur.execute("SELECT pg_has_role(relowner, 'USAGE') FROM pg_class WHERE oid = %s::regclass", (VECTORS,))
        owner = cur.fetchone()
        missing, created = [], False
        for model, dimensions in wanted:
            if index_name(model) in present or dimensions > MAX_INDEXED_DIMENSIONS:
                continue
            if owner is None or not owner[0]:
                missing.append(model)
                continue
            cur.execute(
                cur.mogrify(
                    f"CREATE INDEX IF NOT EXISTS {index_name(model)} ON {VECTORS} "
                    f"USING hnsw ((embedding::vector({dimensions})) vector_cosine_ops) WHERE model = %s",
                    (model,),
                )
            )
            created = True
        if created:  # statistics on the indexed expression, which the planner weighs the index by
            cur.execute(f"ANALYZE {VECTORS}")
    return missing


def tenant_index_name(model: str, tenant: str) -> str:
    """The name of the HNSW index of ``tenant``'s vectors of ``model`` (``create_tenant_indexes``)."""
    key = hashlib.sha256(f"{len(model)}:{model}{tenant}".encode()).hexdigest()[:16]
    return f"{VECTORS}_hnsw_{key}_tenant"


def create_tenant_indexes(
    db: psycopg.Connection[tuple[Any, ...]], *, min_vectors: int = TENANT_INDEX_MIN
) -> list[tuple[str, str]]:
    """Give each tenant holding at least ``min_vectors`` vectors of a model its own HNSW index
    of them (partial on the model and the tenant), which that tenant's searches walk instead of
    the model's shared index; the (model, tenant) pairs given one now. The shared index yields
    every tenant's nearest vectors and a search drops the other tenants' after reading them, so
    a tenant holding a share ``s`` of a model's vectors walks about ``1/s`` as far there.

    An opt-in of the owner of ``VECTORS`` (``db`` in autocommit mode), for a database where a
    few tenants hold many vectors: it counts every (model, tenant) (one scan of the table,
    seconds per million vectors), then builds each index without blocking writes
    (``CREATE INDEX CONCURRENTLY`` with ``TENANT_EF_CONSTRUCTION``, minutes per million; set
    ``maintenance_work_mem`` to hold the graph). Each such vector is then written to two
    graphs. Searches of processes already running use the new index at once (the planner
    chooses it, as the smaller one)."""
    with psycopg.ClientCursor(db) as cur:
        cur.execute("SELECT pg_has_role(relowner, 'USAGE') FROM pg_class WHERE oid = %s::regclass", (VECTORS,))
        owner = cur.fetchone()
        if owner is None or not owner[0]:
            raise ConfigError(f"creating the indexes of {VECTORS} needs its owner: connect as the owner")
        with db.transaction():  # the policies let this transaction count every tenant's vectors
            cur.execute("SELECT set_config('afteraction.all_tenants', 'on', true)")
            cur.execute(
                f"SELECT v.model, v.tenant, m.dimensions FROM {VECTORS} AS v JOIN {VECTOR_MODELS} AS m USING (model) "
                "GROUP BY v.model, v.tenant, m.dimensions HAVING count(*) >= %s ORDER BY v.model, v.tenant",
                (min_vectors,),
            )
        wanted = [(model, tenant, int(d)) for model, tenant, d in cur.fetchall() if d <= MAX_INDEXED_DIMENSIONS]
        cur.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = %s::regclass",
            (VECTORS,),
        )
        present = dict(cur.fetchall())
        created = []
        for model, tenant, dimensions in wanted:
            name = tenant_index_name(model, tenant)
            if present.get(name):
                continue
            if name in present:  # left invalid by an interrupted build
                cur.execute(f"DROP INDEX CONCURRENTLY {name}")
            cur.execute(
                cur.mogrify(
                    f"CREATE INDEX CONCURRENTLY {name} ON {VECTORS} USING hnsw "
                    f"((embedding::vector({dimensions})) vector_cosine_ops) "
                    f"WITH (ef_construction = {TENANT_EF_CONSTRUCTION}) WHERE model = %s AND tenant = %s",
                    (model, tenant),
                )
            )
            created.append((model, tenant))
        if created:
            cur.execute(f"ANALYZE {VECTORS}")
    return created


def search_settings(limit: int) -> list[tuple[str, Sequence[Any]]]:
    """The settings of a search's transaction: pgvector's iterative scans (results in about the
    right order; the statement sorts them again) with ``ef_search`` at least ``limit``; sorting
    disfavoured, so that the nearest rows come from the index walk whenever an index serves the
    model (PostgreSQL misjudges how many rows a scope sees, its columns being correlated: at
    100k lessons it took a scope holding 22% of them for 0.2% and ranked all 22k exactly, 400 ms
    instead of 30), while the exact ranking, which any plan must sort, keeps its best plan; and
    no parallel workers, whose start-up costs a short query more than it saves."""
    return [
        (_SET, ("hnsw.iterative_scan", "relaxed_order")),
        (_SET, ("hnsw.ef_search", str(max(EF_SEARCH, limit)))),
        (_SET, ("enable_sort", "off")),
        (_SET, ("max_parallel_workers_per_gather", "0")),
    ]


def search_sql(
    scope: Scope,
    model: str,
    dimension: int,
    query: Sequence[float],
    now: datetime,
    limit: int,
    min_confidence: float,
) -> tuple[str, list[Any]]:
    """The statement, and its parameters, giving (record, cosine, stored stems) of the ``limit``
    eligible rows ``scope`` sees whose current vector of ``model`` is nearest ``query`` (the data as
    ``records.PG_COLUMNS``)."""
    where, params = scope_predicate(scope, "%s", _column)
    eligible = (
        f"{where} AND e.status IN ({_ELIGIBLE}) AND e.confidence >= %s AND (e.expires_at IS NULL OR e.expires_at > %s)"
    )
    filters = [*params, min_confidence, now]
    q = _literal(query)
    values = [q, model, scope.tenant, *filters, q, limit, q, model, limit, *filters, limit, limit]
    return _SEARCH.format(n=dimension, eligible=eligible), values


class PostgresVectors:
    """The ``VectorStore`` methods over ``VECTORS`` (listing and dropping models in
    ``postgres_vector_drop``); mixed into ``PostgresStore``, which provides ``_run`` (statements
    in one transaction of a tenant), ``_decode``, ``_searched`` and ``url``."""

    url: str
    _decode: Decoder
    _searched: Callable[[tuple[Any, ...]], Experience]
    _dimensions: dict[str, int]  # model → dimension, as recorded in VECTOR_MODELS (never changes)
    _said: set[tuple[str, str]]  # records stored unreadable, logged (``missing_vectors``) once each

    def _run(self, tenant: str | None, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        raise NotImplementedError

    def _dimension(self, model: str, proposed: int | None = None) -> int | None:
        """``model``'s dimension; recorded as ``proposed`` (and its index created) when ``model``
        is new and ``proposed`` is given; None when the model has no vectors here."""
        known = self._dimensions.get(model)
        if known is not None:
            return known
        statements: list[tuple[str, Sequence[Any]]] = []
        if proposed is not None:
            insert = f"INSERT INTO {VECTOR_MODELS} (model, dimensions) VALUES (%s, %s) ON CONFLICT DO NOTHING"
            statements.append((insert, (model, proposed)))
        statements.append((f"SELECT dimensions FROM {VECTOR_MODELS} WHERE model = %s", (model,)))
        results = self._run(None, statements)
        rows = results[-1][1]
        if not rows:
            return None
        self._dimensions[model] = dimension = int(rows[0][0])
        if proposed is not None and results[0][0] == 1:
            self._index(model)
        return dimension

    def _index(self, model: str) -> None:
        """Create ``model``'s index, or say once what the owner should run."""
        with psycopg.connect(self.url, autocommit=True) as db:
            missing = create_vector_indexes(db, [model])
        if missing:
            log.warning(
                "afteraction: vectors of %r are searched exactly: this role does not own %s and cannot create "
                "their HNSW index; run `afteraction db upgrade --db <the owner's URL>` to create it",
                model,
                VECTORS,
            )

    def put_vectors(self, vectors: Sequence[StoredVector]) -> int:
        latest: dict[tuple[str, str, str], tuple[int, str]] = {}  # the last of each (tenant, id, model)
        for i, item in enumerate(vectors):
            if not isinstance(item, StoredVector):
                raise ValidationError(f"vectors[{i}]", f"must be a StoredVector, got {type(item).__name__}")
            values = [float(x) for x in item.vector]
            if not values or not all(math.isfinite(x) for x in values):
                raise ValidationError(f"vectors[{i}].vector", "must be a non-empty list of finite numbers")
            dimension = self._dimension(item.model, len(values))
            if dimension != len(values):
                raise ValidationError(
                    f"vectors[{i}].vector",
                    f"has {len(values)} dimensions; {item.model!r} vectors here have {dimension}",
                )
            latest[(item.tenant, item.id, item.model)] = (item.revision, _literal(values))
        by_tenant: dict[str, list[tuple[str, str, int, str]]] = {}
        for (tenant, id, model), (revision, literal) in latest.items():
            by_tenant.setdefault(tenant, []).append((id, model, revision, literal))
        if not by_tenant:
            return 0
        statements: list[tuple[str, Sequence[Any]]] = []
        for tenant, rows in by_tenant.items():
            if statements:
                statements.append((_SET, ("afteraction.tenant", tenant)))
            columns = [list(column) for column in zip(*rows, strict=True)]
            statements.append((_PUT, (*columns, tenant)))
        results = self._run(next(iter(by_tenant)), statements)
        return sum(count for (sql, _), (count, _) in zip(statements, results, strict=True) if sql is not _SET)

    def search_vector(
        self,
        scope: Scope,
        model: str,
        vector: Sequence[float],
        *,
        now: datetime,
        limit: int = 50,
        min_confidence: float = 0.5,
    ) -> list[Candidate]:
        query = [float(x) for x in vector]
        if limit <= 0:
            return []
        dimension = self._dimension(model)
        if dimension is None:
            return []
        if dimension != len(query):
            raise ValidationError("vector", f"has {len(query)} dimensions; {model!r} vectors here have {dimension}")
        if not all(math.isfinite(x) for x in query):
            raise ValidationError("vector", "must hold finite numbers only")
        sql, values = search_sql(scope, model, dimension, query, now, limit, min_confidence)
        rows = self._run(scope.tenant, [*search_settings(limit), (sql, values)])[-1][1]
        return [Candidate(self._searched(row), 0.0, frozenset(row[-1].split()), float(row[-2])) for row in rows]

    def missing_vectors(
        self,
        model: str,
        *,
        limit: int = 256,
        tenant: str | None = None,
        after: tuple[str, str] | None = None,
        unreadable: list[tuple[str, str, str]] | None = None,
    ) -> list[Experience]:
        """See ``VectorStore``: a record stored unreadable is passed over (``unreadable.read_past``)."""
        if limit <= 0:
            return []
        sql = _MISSING.format(tenant="" if tenant is None else "e.tenant = %s AND ")
        start = max(after or ("", ""), (tenant or "", ""))  # never before the tenant's first record

        def rows(last: tuple[str, str] | None, wanted: int) -> list[tuple[str, str, str]]:
            params = [*([tenant] if tenant is not None else []), *(last or start), model, wanted]
            return list(self._run(tenant, [(sql, params)])[0][1])

        found = read_past(rows, lambda data: self._decode(data, remember=False), limit, after)
        say_unreadable(self._said, found.unreadable, unreadable)
        return found.records

    def vector_models(self, *, tenant: str | None = None) -> list[VectorModelInfo]:
        from afteraction.store.postgres_vector_drop import MODELS, models

        check_names(None, tenant)
        where, params = ("", []) if tenant is None else ("WHERE v.tenant = %s", [tenant])
        return models(self._run(tenant, [(MODELS.format(where=where), params)])[0][1])

    def drop_vectors(self, model: str, *, tenant: str | None = None) -> int:
        """See ``VectorStore`` and ``postgres_vector_drop``: as the tables' owner (ConfigError
        naming what to do otherwise), on a connection of its own."""
        from afteraction.store.postgres_vector_drop import drop_model

        check_names(model, tenant)
        try:
            with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as db:
                dropped = drop_model(db, model, tenant)
        except psycopg.Error as exc:
            raise StoreError(f"dropping the vectors of {model!r} failed: {explain(exc, self.url)}") from exc
        finally:
            self._dimensions.pop(model, None)
        return dropped
