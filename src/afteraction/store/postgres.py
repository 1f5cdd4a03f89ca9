"""PostgresStore: one PostgreSQL shared by every agent host and service replica.

psycopg 3 with a connection pool (the ``postgres`` extra). Every operation is one transaction
in one round trip that begins by setting ``afteraction.tenant`` for that transaction from the
caller's scope: row-level security (``postgres_schema``) then hides every other tenant's rows
from whatever the transaction runs, and the queries also carry the full scope predicate. Most
are one simple query (the setting and the statements); storing one record is one call of
``afteraction_put`` (``postgres_write_schema``), which sets the tenant itself. The schema, its
migrations and the checks at open live in ``postgres_schema``; the search statement in
``postgres_search``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg_pool import PoolTimeout

from afteraction.core.text import search_stems
from afteraction.errors import ConflictError, NotFoundError, StoreError, ValidationError
from afteraction.model import Experience, Scope, Status
from afteraction.store import POOL_OPTIONS, pool_options, postgres_url, records
from afteraction.store._sql import COLUMNS, Decoder, lessons_query, record_values, scope_predicate
from afteraction.store.base import Candidate, check_ids, check_owner, check_page
from afteraction.store.postgres_errors import explain, hide_password
from afteraction.store.postgres_pool import Pool
from afteraction.store.postgres_privileges import (
    FORGET_PRIVILEGES,
    SERVICE_PRIVILEGES,
    check_privileges,
    require_delete,
)
from afteraction.store.postgres_schema import TABLE, migrate
from afteraction.store.postgres_search import search_sql
from afteraction.store.postgres_vectors import PostgresVectors, create_vector_indexes
from afteraction.store.postgres_write_schema import PUT, PUT_ARGUMENTS

__all__ = ["POOL_OPTIONS", "PostgresStore", "pool_options", "redact", "row"]

CONNECT_TIMEOUT = 10
RETRIES = 2  # more attempts of an operation whose connection dropped
_PAGE = 500
_DATA = COLUMNS.index("data")

_COLUMNS = ", ".join(f'"{c}"' if c == "user" else c for c in COLUMNS)
#: One record stored: ``afteraction_put`` (m007) sets the tenant and inserts it, in the call's
#: own transaction. Its parameters are bound by the server; it is not a named prepared statement
#: (PgBouncer in transaction mode may run each call on another server connection), and needs
#: none: the statement is short, and PL/pgSQL caches the plan of the INSERT inside.
_PUT = f"SELECT {PUT}({', '.join(f'%s::{kind}' for _, kind in PUT_ARGUMENTS)})"
_ROW = f"({', '.join(['%s'] * len(COLUMNS))})"
_UPDATE = f"""
    UPDATE {TABLE} SET {", ".join(f"{column} = %s" for column in _COLUMNS.split(", "))}
    WHERE tenant = %s AND id = %s AND revision = %s
"""
#: The row as the UPDATE left it, read by a second statement of the same round trip: under READ
#: COMMITTED each statement takes its own snapshot, so this one sees what a writer that held the
#: row's lock committed while the UPDATE waited for it (the UPDATE's own snapshot predates that).
_CURRENT = f"SELECT revision, data FROM {TABLE} WHERE tenant = %s AND id = %s"
_INSERT = f"INSERT INTO {TABLE} ({_COLUMNS})"
_ON_CONFLICT = "ON CONFLICT (tenant, id) DO NOTHING"
_ROWS_PER_INSERT = 500
_SET = "SELECT set_config(%s, %s, true)"  # for this transaction only

Result = tuple[int, list[tuple[Any, ...]]]
T = TypeVar("T")


def _batch(db: psycopg.Connection[tuple[Any, ...]], statements: Sequence[tuple[str, Sequence[Any]]]) -> list[Result]:
    """Run the statements as one simple query: one round trip, and PostgreSQL runs a query of
    several statements as one transaction (all or nothing) when it holds no BEGIN or COMMIT.
    The parameters are bound by psycopg's client-side cursor (quoted literals)."""
    with psycopg.ClientCursor(db) as cur:
        cur.execute("; ".join(cur.mogrify(sql, params) for sql, params in statements))
        results: list[Result] = []
        while True:
            results.append((cur.rowcount, cur.fetchall() if cur.description is not None else []))
            if not cur.nextset():
                return results


def row(experience: Experience) -> tuple[Any, ...]:
    """The column values of one record, in ``_COLUMNS`` order."""
    return record_values(experience, lambda instant: instant)


def _column(part: str) -> str:
    return f'e."{part}"'


def _scope_sql(scope: Scope) -> tuple[str, list[Any]]:
    """The predicate (on alias ``e``) for the rows ``scope`` sees, and its parameters."""
    return scope_predicate(scope, "%s", _column)


def redact(url: str) -> str:
    """The URL without a password, for messages (``postgres_errors.hide_password``: the password
    masked even where ``core.redact.redact_url`` would not find it, as in a URL libpq refuses)."""
    return hide_password(url, url)


def _lost(exc: BaseException | None) -> bool:
    """Whether ``exc`` says the connection itself failed (the server went away, or ended this
    session): the operation may be tried again on another connection."""
    if not isinstance(exc, psycopg.OperationalError) or isinstance(exc, PoolTimeout):
        return False  # a pool with no free connection is busy, not broken: waiting again would triple the wait
    state = exc.sqlstate
    return state is None or state.startswith(("08", "57P"))


class _Lost(Exception):
    """The connection was found dead before the caller's work began: take another."""


class PostgresStore(PostgresVectors):
    """A ``Store`` and ``VectorStore`` (``postgres_vectors``) in a PostgreSQL database. Opening
    connects once to check and migrate the schema and create missing vector indexes (a clear
    StoreError, naming what to do, when it cannot), then keeps a pool of
    ``min_size`` to ``max_size`` connections (also settable as URL options, see ``pool_options``).

    Every operation is one transaction in one round trip. When the connection drops during
    one, it is tried again on another connection (``RETRIES`` times): each is idempotent, and
    a transaction cut off midway leaves nothing behind. While the database cannot be reached,
    each operation fails within a few seconds, naming why (``postgres_pool``)."""

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 30.0) -> None:
        url, options = pool_options(postgres_url(url) or url)
        self.url = url
        self._where = redact(self.url)
        self._decode = Decoder(self._where)
        self._scopes = records.ScopeCache()
        self._dimensions: dict[str, int] = {}
        self._said: set[tuple[str, str]] = set()
        self._service_checked = False
        min_size = int(options.get("min_size", min_size))
        max_size = max(min_size, int(options.get("max_size", max_size)))
        try:
            with psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT) as db:
                migrate(db, self._where)
                check_privileges(db, self._where)
                create_vector_indexes(db)  # those a role that was not the owner could not create
        except psycopg.Error as exc:
            raise StoreError(f"cannot open the PostgreSQL store at {self._where}: {explain(exc, self.url)}") from exc
        self._pool: Pool | None = Pool(
            self.url,
            self._where,
            min_size=min_size,
            max_size=max_size,
            timeout=options.get("timeout", timeout),
            connect_timeout=CONNECT_TIMEOUT,
        )

    def require_service(self) -> None:
        """StoreError naming the GRANTs when the role lacks what the service's parts use (its
        events, API keys and OTLP span buffer, which call this when opened over the store; a
        store for agent hosts alone needs none of it). Checked once per store."""
        if not self._service_checked:
            who = "the afteraction service"
            self._retrying(lambda db: check_privileges(db, self._where, SERVICE_PRIVILEGES, (), who=who))
            self._service_checked = True

    def __repr__(self) -> str:
        return f"PostgresStore({self._where!r})"

    # transactions

    def _run(
        self, tenant: str | None, statements: Sequence[tuple[str, Sequence[Any]]], *, retries: int = RETRIES
    ) -> list[Result]:
        """The statements in one transaction that sees ``tenant``'s rows only (every tenant's,
        read only, when None), sent in one round trip; each one's (row count, rows). Tried
        again on another connection, ``retries`` times, when the connection is lost."""
        setting = ("afteraction.all_tenants", "on") if tenant is None else ("afteraction.tenant", tenant)
        return self._retrying(lambda db: _batch(db, [(_SET, setting), *statements])[1:], retries)

    def _retrying(self, work: Callable[[psycopg.Connection[tuple[Any, ...]]], T], retries: int = RETRIES) -> T:
        """``work`` on a pooled connection, tried again on another one, ``retries`` times, when
        the connection is lost; any other failure is a StoreError at once."""
        for attempt in range(retries + 1):
            pool = self._pool
            if pool is None:
                raise StoreError(f"the store at {self._where} is closed")
            try:
                with pool.connection() as db:
                    return work(db)
            except psycopg.Error as exc:
                if _lost(exc):
                    pool.lost()  # drops the others that died with it; StoreError naming why when the database is down
                    if attempt < retries:
                        continue
                raise self._failed(exc) from exc
        raise AssertionError("unreachable")

    def _failed(self, exc: psycopg.Error) -> StoreError:
        """The StoreError for ``exc``, which libpq's text says, the password masked (``explain``)."""
        return StoreError(f"the PostgreSQL store at {self._where} failed: {explain(exc, self.url)}")

    def _transaction(self, tenant: str | None) -> AbstractContextManager[psycopg.Cursor[tuple[Any, ...]]]:
        """A cursor in one transaction that sees ``tenant``'s rows only (every tenant's, read
        only, when None): for the other tables in this database (events), whose operations
        take several statements with results in between."""
        return self._settled(("all_tenants", "on") if tenant is None else ("tenant", tenant))

    @contextmanager
    def _settled(self, *settings: tuple[str, str]) -> Iterator[psycopg.Cursor[tuple[Any, ...]]]:
        """A cursor in one transaction with the ``afteraction.<name>`` settings made. A connection
        found dead by the first statement (the server ended it while it sat in the pool) is
        dropped with the others that died with it, and another is taken (``RETRIES`` times),
        as ``_retrying`` does: nothing of the caller's has run on it yet."""
        for attempt in range(RETRIES + 1):
            pool = self._pool
            if pool is None:
                raise StoreError(f"the store at {self._where} is closed")
            try:
                with ExitStack() as stack:  # left by an exception, it rolls back and gives the connection back
                    try:
                        db = stack.enter_context(pool.connection())
                        stack.enter_context(db.transaction())
                        cur = stack.enter_context(db.cursor())
                        for name, value in settings:
                            cur.execute("SELECT set_config(%s, %s, true)", (f"afteraction.{name}", value))
                    except psycopg.Error as exc:
                        if _lost(exc) and attempt < RETRIES:
                            raise _Lost from exc
                        raise self._failed(exc) from exc
                    try:
                        yield cur
                    except psycopg.Error as exc:
                        raise self._failed(exc) from exc
                    return
            except _Lost:
                pool.lost()  # drop the others that died with it (or say why the database is down), then take another

    # writes

    def put(self, experience: Experience) -> bool:
        return self.put_many([experience]) == 1

    def put_many(self, experiences: Sequence[Experience]) -> int:
        if len(experiences) == 1 and isinstance(experiences[0], Experience):
            one = row(experiences[0])  # one short call (m007), its own transaction
            return int(self._retrying(lambda db: db.execute(_PUT, one, prepare=False).fetchall()[0][0]))
        by_tenant: dict[str, list[tuple[Any, ...]]] = {}
        for i, experience in enumerate(experiences):
            if not isinstance(experience, Experience):
                raise ValidationError(f"experiences[{i}]", f"must be an Experience, got {type(experience).__name__}")
            by_tenant.setdefault(experience.scope.tenant, []).append(row(experience))
        if not by_tenant:
            return 0
        statements: list[tuple[str, Sequence[Any]]] = []
        for tenant, rows in by_tenant.items():
            if statements:
                statements.append((_SET, ("afteraction.tenant", tenant)))
            for start in range(0, len(rows), _ROWS_PER_INSERT):
                chunk = rows[start : start + _ROWS_PER_INSERT]
                values = ", ".join([_ROW] * len(chunk))
                statements.append((f"{_INSERT} VALUES {values} {_ON_CONFLICT}", [v for r in chunk for v in r]))
        results = self._run(next(iter(by_tenant)), statements)
        return sum(count for (sql, _), (count, _) in zip(statements, results, strict=True) if sql is not _SET)

    def update(self, experience: Experience, *, expected_revision: int) -> Experience:
        updated = replace(experience, revision=expected_revision + 1)
        tenant, id = experience.scope.tenant, experience.id
        values = row(updated)
        statements = [(_UPDATE, (*values, tenant, id, expected_revision)), (_CURRENT, (tenant, id))]
        for attempt in range(RETRIES + 1):
            try:
                [(changed, _), (_, current)] = self._run(tenant, statements, retries=0)
            except StoreError as exc:
                if attempt < RETRIES and _lost(exc.__cause__):
                    continue
                raise
            if changed:
                return updated
            if not current:
                raise NotFoundError(f"no record {id!r} in tenant {tenant!r} to update")
            [(revision, data)] = current
            if attempt > 0 and revision == updated.revision and data == values[_DATA]:
                return updated  # the connection dropped at COMMIT, after the first attempt had written it
            break
        raise ConflictError(
            f"record {id!r} in tenant {tenant!r} is at revision {revision}, not {expected_revision}; "
            "read it again and retry"
        )

    def delete(self, scope: Scope, ids: Sequence[str]) -> int:
        """See ``Store``: one statement; the stems go by m005's trigger, the vectors by their
        foreign key (``ON DELETE CASCADE``). Repeated after a dropped connection, a delete whose
        first attempt committed counts those rows as already gone."""
        wanted = check_ids(ids)
        if not wanted:
            return 0
        where, params = _scope_sql(scope)
        return len(self._deleting(scope.tenant, f"{where} AND e.id = ANY(%s::text[])", (*params, wanted)))

    def delete_user(self, tenant: str, user: str) -> list[str]:
        """See ``Store``: as ``delete`` does, for every record of the user."""
        tenant, user = check_owner(tenant, user)
        return self._deleting(tenant, 'e.tenant = %s AND e."user" = %s', (tenant, user))

    def _deleting(self, tenant: str, where: str, params: Sequence[Any]) -> list[str]:
        """The ids of ``tenant``'s records deleted by one statement, under ``where``. Asked only
        here, DELETE on the table is a privilege a role may lack (a deployment that never forgets
        is append-only): an AppendOnlyError then names the GRANT (``FORGET_PRIVILEGES``)."""
        sql = f"DELETE FROM {TABLE} AS e WHERE {where} RETURNING e.id"
        try:
            [(_, rows)] = self._run(tenant, [(sql, params)])
        except StoreError as exc:
            if not isinstance(exc.__cause__, psycopg.errors.InsufficientPrivilege):
                raise
            self._retrying(lambda db: require_delete(db, FORGET_PRIVILEGES, what="lessons", who="forgetting a lesson"))
            raise  # pragma: no cover - the check names the grant; a role that has it was refused for another reason
        return [id for (id,) in rows]

    # reads

    def _searched(self, row: tuple[Any, ...]) -> Experience:
        """A search row's record, decoded only as far as it is read (``records``)."""
        return records.searched(self._decode, self._scopes, row)

    def get(self, scope: Scope, id: str) -> Experience | None:
        where, params = _scope_sql(scope)
        sql = f"SELECT e.data FROM {TABLE} AS e WHERE {where} AND e.id = %s"
        [(_, rows)] = self._run(scope.tenant, [(sql, (*params, id))])
        return self._decode(rows[0][0]) if rows else None

    def search_text(
        self,
        scope: Scope,
        terms: Sequence[str],
        *,
        now: datetime,
        limit: int = 50,
        min_confidence: float = 0.5,
    ) -> list[Candidate]:
        stems = search_stems(terms)
        if not stems or limit <= 0:
            return []
        [(_, rows)] = self._run(scope.tenant, [search_sql(scope, stems, now, limit, min_confidence)])
        return [Candidate(self._searched(row), float(row[-2]), frozenset(row[-1].split())) for row in rows]

    def lessons(
        self,
        scope: Scope,
        *,
        limit: int = 50,
        offset: int = 0,
        status: Status | None = None,
    ) -> list[Experience]:
        if not check_page(limit, offset):
            return []
        sql, params = lessons_query(scope, status, table=TABLE, mark="%s", column=_column)
        [(_, rows)] = self._run(scope.tenant, [(sql, (*params, limit, offset))])
        return [self._decode(data) for (data,) in rows]

    def count(self, scope: Scope) -> int:
        where, params = _scope_sql(scope)
        [(_, rows)] = self._run(scope.tenant, [(f"SELECT count(*) FROM {TABLE} AS e WHERE {where}", params)])
        return int(rows[0][0])

    def iter_all(self, tenant: str | None = None) -> Iterator[Experience]:
        """Pages of rows in (tenant, id) order, each page its own transaction."""
        last: tuple[str, str] = (tenant or "", "")
        tenant_sql = "" if tenant is None else "tenant = %s AND "
        sql = (
            f"SELECT tenant, id, data FROM {TABLE} WHERE {tenant_sql}(tenant, id) > (%s, %s) "
            "ORDER BY tenant, id LIMIT %s"
        )
        while True:
            [(_, page)] = self._run(tenant, [(sql, (*([tenant] if tenant is not None else []), *last, _PAGE))])
            for _, _, data in page:
                yield self._decode(data, remember=False)
            if len(page) < _PAGE:
                return
            last = (page[-1][0], page[-1][1])

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
