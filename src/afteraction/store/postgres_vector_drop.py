"""Listing and dropping a model's vectors in PostgreSQL: ``vector_models`` (any role that reads
the store) and ``drop_model`` (the tables' owner).

Dropping is an owner's operation, like ``create_tenant_indexes``: the application role has no
DELETE on ``VECTORS`` (``postgres_privileges``), and the indexes that serve only the dropped
vectors need the owner to go. Row-level security is forced on the owner too, and its DELETE
policy admits the rows of the transaction's ``afteraction.tenant`` only, so a drop of every
tenant reads which tenants hold vectors of the model (``afteraction.all_tenants``) and deletes
each one's under its own setting, all in one transaction:

1. ``SHARE ROW EXCLUSIVE`` on ``VECTORS``: writers wait until the drop commits (so none adds a
   vector of the model behind it), searches go on.
2. The rows of each tenant, then that tenant's own index (``tenant_index_name``) if it has one.
3. When no vector of the model is left in any tenant: the model's shared HNSW index
   (``index_name``) and its ``VECTOR_MODELS`` row, so that the model id can come back with
   another dimension. Dropping an index holds ``ACCESS EXCLUSIVE`` (searches wait too) until
   the commit, which follows at once.

A process that has stored or searched the model keeps its dimension in memory
(``PostgresVectors._dimensions``); if the same id is stored again after a drop, restart it.
``PostgresVectors`` imports this module when it lists or drops.
"""

from __future__ import annotations

from typing import Any

import psycopg

from afteraction.errors import ConfigError
from afteraction.store.base import VectorModelInfo
from afteraction.store.postgres_schema import TABLE, VECTOR_MODELS, VECTORS
from afteraction.store.postgres_vectors import index_name, tenant_index_name

__all__ = ["MODELS", "drop_model", "models"]

#: Each (model, dimension) with vectors the transaction sees, with how many are current.
MODELS = f"""
    SELECT v.model, vector_dims(v.embedding), count(*), count(*) FILTER (WHERE e.revision = v.revision)
    FROM {VECTORS} AS v LEFT JOIN {TABLE} AS e ON e.pk = v.pk
    {{where}} GROUP BY 1, 2 ORDER BY 1, 2
"""
_SET = "SELECT set_config(%s, %s, true)"
_INDEXES = "SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexname = ANY(%s)"


def models(rows: list[tuple[Any, ...]]) -> list[VectorModelInfo]:
    return [VectorModelInfo(str(m), int(d), int(n), int(current)) for m, d, n, current in rows]


def drop_model(db: psycopg.Connection[tuple[Any, ...]], model: str, tenant: str | None) -> int:
    """Delete the vectors of ``model`` (of ``tenant``, or of every tenant) and the indexes that
    served only them, in one transaction (``db`` in autocommit mode, as the owner of ``VECTORS``);
    the number of vectors deleted. ConfigError when the role is not the owner."""
    with psycopg.ClientCursor(db) as cur:
        cur.execute("SELECT pg_has_role(relowner, 'USAGE') FROM pg_class WHERE oid = %s::regclass", (VECTORS,))
        owner = cur.fetchone()
        if owner is None or not owner[0]:
            raise ConfigError(
                f"dropping vectors needs the owner of {VECTORS} (this role may not delete them or drop their "
                "indexes): run it as the tables' owner, e.g. `afteraction db drop-vectors --db <the owner's URL>`"
            )
        with db.transaction():
            cur.execute(f"LOCK TABLE {VECTORS} IN SHARE ROW EXCLUSIVE MODE")
            cur.execute(_SET, ("afteraction.all_tenants", "on"))  # reads see every tenant; deletes, one
            tenants = [tenant] if tenant is not None else _tenants(cur, model)
            dropped = 0
            for name in tenants:
                cur.execute(_SET, ("afteraction.tenant", name))
                cur.execute(f"DELETE FROM {VECTORS} WHERE model = %s AND tenant = %s", (model, name))
                dropped += cur.rowcount
            left = tenant is not None and _any_left(cur, model)  # all tenants' dropped: none (writers wait)
            names = [tenant_index_name(model, name) for name in tenants] + ([] if left else [index_name(model)])
            cur.execute(_INDEXES, (VECTORS, names))
            for (index,) in cur.fetchall():
                cur.execute(f"DROP INDEX {index}")
            if not left:
                cur.execute(f"DELETE FROM {VECTOR_MODELS} WHERE model = %s", (model,))
    return dropped


def _tenants(cur: psycopg.ClientCursor[tuple[Any, ...]], model: str) -> list[str]:
    cur.execute(f"SELECT DISTINCT tenant FROM {VECTORS} WHERE model = %s ORDER BY tenant", (model,))
    return [str(name) for (name,) in cur.fetchall()]


def _any_left(cur: psycopg.ClientCursor[tuple[Any, ...]], model: str) -> bool:
    cur.execute(f"SELECT EXISTS (SELECT 1 FROM {VECTORS} WHERE model = %s)", (model,))
    found = cur.fetchone()
    return bool(found and found[0])
