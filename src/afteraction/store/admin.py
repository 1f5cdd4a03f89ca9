"""Schema administration for the CLI's ``db`` commands: where a database's schema stands
(``status``, which only reads), bringing it up to date (``upgrade``), giving the largest
tenants of a PostgreSQL store their own vector index (``index_tenants``), and listing and
dropping an embedding model's vectors (``vector_models``, ``drop_vectors``).

The migrations and the checks that a database is ours are the backends' own
(``sqlite_schema``, ``postgres_schema``); this module reads their records. Opening a store
migrates it, so ``upgrade`` opens the store and reports the migrations that opening applied.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from afteraction.errors import ConfigError, StoreError
from afteraction.store import Backend, locate, open_store, require_postgres, sqlite_schema
from afteraction.store.base import VectorModelInfo, VectorStore, check_names

__all__ = [
    "AppliedMigration",
    "SchemaStatus",
    "drop_vectors",
    "index_tenants",
    "status",
    "upgrade",
    "vector_models",
]


@dataclass(frozen=True, slots=True)
class AppliedMigration:
    name: str
    applied_at: datetime


@dataclass(frozen=True, slots=True)
class SchemaStatus:
    """Where a database's afteraction schema stands. ``ours`` is False for a blank database
    (nothing of afteraction's in it yet) and for ``:memory:``, which has no schema at all;
    a database of something else, or newer than this code, raises StoreError instead."""

    database: str
    backend: Backend
    version: int
    expected: int
    applied: tuple[AppliedMigration, ...]
    pending: tuple[str, ...]
    ours: bool

    @property
    def up_to_date(self) -> bool:
        return not self.pending

    def to_dict(self) -> dict[str, Any]:
        return {
            "database": self.database,
            "backend": self.backend,
            "ours": self.ours,
            "version": self.version,
            "expected": self.expected,
            "up_to_date": self.up_to_date,
            "applied": [{"name": m.name, "applied_at": m.applied_at.isoformat()} for m in self.applied],
            "pending": list(self.pending),
        }


def status(url: str) -> SchemaStatus:
    """The schema status of the database ``url`` names, read without changing anything (a
    missing SQLite file is not created). ConfigError for a bad URL; StoreError when the
    database cannot be read, belongs to something else or is newer than this code."""
    backend, target = locate(url)
    if backend == "memory":
        return SchemaStatus(url, backend, 0, 0, (), (), ours=False)
    if backend == "sqlite":
        return _sqlite_status(Path(target).expanduser())
    require_postgres(url)
    return _postgres_status(target)


def upgrade(url: str) -> list[str]:
    """Apply the pending migrations (forward-only) by opening the store; the names applied, in
    order (none when it was up to date). A PostgreSQL store is opened even when up to date: as
    the tables' owner, that creates the vector indexes another role could not
    (``postgres_vectors.create_vector_indexes``). Errors as ``status``."""
    before = status(url)
    if before.backend == "memory" or (before.up_to_date and before.backend != "postgresql"):
        return []
    open_store(url).close()
    done = {m.name for m in before.applied}
    return [m.name for m in status(url).applied if m.name not in done]


def index_tenants(url: str, *, min_vectors: int | None = None) -> list[tuple[str, str]] | None:
    """Give each tenant of a PostgreSQL store holding at least ``min_vectors`` vectors of a model
    (default ``postgres_vectors.TENANT_INDEX_MIN``) its own HNSW index
    (``postgres_vectors.create_tenant_indexes``; run as the tables' owner,
    which migrates first): the (model, tenant) pairs indexed now. None for SQLite and
    ``:memory:``, whose vector indexes are one per tenant already. Errors as ``status``."""
    backend, target = locate(url)
    if backend != "postgresql":
        return None
    import psycopg

    from afteraction.store.postgres import CONNECT_TIMEOUT, pool_options, redact
    from afteraction.store.postgres_errors import explain
    from afteraction.store.postgres_vectors import TENANT_INDEX_MIN, create_tenant_indexes

    require_postgres(url)
    open_store(url).close()  # migrated, with the shared indexes, before any tenant's own
    target = pool_options(target)[0]
    try:
        with psycopg.connect(target, autocommit=True, connect_timeout=CONNECT_TIMEOUT) as db:
            return create_tenant_indexes(db, min_vectors=TENANT_INDEX_MIN if min_vectors is None else min_vectors)
    except psycopg.Error as exc:
        raise StoreError(f"cannot index the tenants of {redact(target)}: {explain(exc, target)}") from exc


def vector_models(url: str, *, tenant: str | None = None) -> list[VectorModelInfo]:
    """Each embedding model with vectors in the store ``url`` names (of one tenant if given):
    ``VectorStore.vector_models``. A missing SQLite file holds none (it is not created).
    Errors as ``status``; ValidationError for an empty tenant."""
    check_names(None, tenant)
    with _vector_store(url) as store:
        return [] if store is None else store.vector_models(tenant=tenant)


def drop_vectors(url: str, model: str, *, tenant: str | None = None) -> int:
    """Delete every vector of ``model`` (of one tenant if given) and what serves only them:
    ``VectorStore.drop_vectors`` (PostgreSQL: as the tables' owner, ConfigError otherwise).
    The number deleted. Errors as ``vector_models``; ValidationError for an empty model."""
    check_names(model, tenant)
    with _vector_store(url) as store:
        return 0 if store is None else store.drop_vectors(model, tenant=tenant)


@contextmanager
def _vector_store(url: str) -> Iterator[VectorStore | None]:
    """The store ``url`` names, closed afterwards; None for an SQLite file that does not exist."""
    backend, target = locate(url)
    if backend == "sqlite" and not Path(target).expanduser().exists():
        yield None
        return
    store = open_store(url)
    try:
        if not isinstance(store, VectorStore):
            raise ConfigError(f"the store {url!r} keeps no vectors")
        yield store
    finally:
        store.close()


def _result(
    database: str, backend: Backend, names: Sequence[str], rows: Sequence[tuple[str, datetime]], version: int
) -> SchemaStatus:
    applied = dict(rows)
    return SchemaStatus(
        database=database,
        backend=backend,
        version=version,
        expected=len(names),
        applied=tuple(AppliedMigration(name, applied[name]) for name in names if name in applied),
        pending=tuple(name for name in names if name not in applied),
        ours=bool(applied) or version > 0,
    )


def _sqlite_status(path: Path) -> SchemaStatus:
    where = str(path)
    names = [m.__name__ for m in sqlite_schema.MIGRATIONS]
    sqlite_schema.check_file(path)
    if not path.exists() or path.stat().st_size == 0:
        return _result(where, "sqlite", names, [], 0)
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)) as db:
            sqlite_schema.check_content(db, where)
            db.execute("BEGIN")  # one snapshot
            version = sqlite_schema.inspect(db, where)
            rows = [] if version == 0 else db.execute(f"SELECT name, applied_at FROM {sqlite_schema.MIGRATIONS_TABLE}")
            applied = [(str(name), _instant(datetime.fromisoformat(str(at)))) for name, at in rows]
    except (sqlite3.DatabaseError, ValueError) as exc:  # ValueError: an applied_at that is not a time
        raise StoreError(f"{where} cannot be read as an afteraction database ({exc})") from exc
    return _result(where, "sqlite", names, applied, version)


def _postgres_status(url: str) -> SchemaStatus:
    import psycopg

    from afteraction.store import postgres_errors, postgres_schema
    from afteraction.store.postgres import CONNECT_TIMEOUT, pool_options, redact

    url = pool_options(url)[0]
    where = redact(url)
    names = [m.__name__ for m in postgres_schema.MIGRATIONS]
    try:
        connection = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
        with connection as db, db.transaction(), db.cursor() as cur:
            cur.execute("SET TRANSACTION READ ONLY")
            version = postgres_schema.version(cur, where)
            applied: list[tuple[str, datetime]] = []
            if version:
                cur.execute(f"SELECT name, applied_at FROM {postgres_schema.MIGRATIONS_TABLE}")
                applied = [(str(name), _instant(at)) for name, at in cur.fetchall()]
    except psycopg.errors.InsufficientPrivilege as exc:  # only the migrations table is read: name its GRANT
        table = postgres_schema.MIGRATIONS_TABLE
        raise StoreError(
            f"{where}: the role may not read {table} ({postgres_errors.explain(exc, url)}); as its owner run: "
            f"GRANT SELECT ON {table} TO <this role>"
        ) from exc
    except psycopg.Error as exc:
        raise StoreError(
            f"cannot read the PostgreSQL database at {where}: {postgres_errors.explain(exc, url)}"
        ) from exc
    return _result(where, "postgresql", names, applied, version)


def _instant(value: object) -> datetime:
    if not isinstance(value, datetime):
        raise StoreError(f"a migration's applied_at is {value!r}, not a time")
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
