"""PostgresStore: one PostgreSQL shared by every agent host and service replica.

psycopg 3 with a connection pool (the ``postgres`` extra). Every operation is one transaction
on a pooled connection, and begins by setting ``afteraction.tenant`` for that transaction from
the caller's scope: row-level security (``postgres_schema``) then hides every other tenant's
rows from whatever the transaction runs, and the queries also carry the full scope predicate.
The schema and its migrations live in ``postgres_schema``.

Search: a GIN index on a tsvector of the Snowball stems of task (weight A), summary (B) and
lesson (C), with scope and eligibility in the same statement. The score of a row is the sum over
the query's stems it holds of ``ts_rank`` for that stem times the stem's rarity
(``ln(1 + matched / holding)``), counted among the rows the caller may use, so rows of other
scopes never weigh in a score (unlike SQLite's FTS5, whose statistics span the whole index).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from afteraction.core.text import search_stems
from afteraction.errors import ConflictError, NotFoundError, StoreError, ValidationError
from afteraction.model import ELIGIBLE_STATUSES, Experience, Scope, Status
from afteraction.store._sql import COLUMNS, Decoder, lessons_query, record_values, scope_predicate
from afteraction.store.base import Candidate, check_page
from afteraction.store.postgres_schema import TABLE, migrate

__all__ = ["PostgresStore"]

CONNECT_TIMEOUT = 10
_PAGE = 500
_ELIGIBLE = ", ".join(f"'{status.value}'" for status in sorted(ELIGIBLE_STATUSES, key=lambda s: s.value))

_COLUMNS = ", ".join(f'"{c}"' if c == "user" else c for c in COLUMNS)
_INSERT = (
    f"INSERT INTO {TABLE} ({_COLUMNS}) VALUES ({', '.join(['%s'] * len(_COLUMNS.split(', ')))}) "
    "ON CONFLICT (tenant, id) DO NOTHING"
)
_UPDATE = (
    f"UPDATE {TABLE} SET "
    + ", ".join(f"{column} = %s" for column in _COLUMNS.split(", "))
    + " WHERE tenant = %s AND id = %s AND revision = %s"
)
_SEARCH = f"""
    WITH terms AS (
        SELECT i, plainto_tsquery('simple', stem) AS tsq FROM unnest(%s::text[]) WITH ORDINALITY AS u(stem, i)
    ),
    hits AS MATERIALIZED (
        SELECT e.pk, t.i, ts_rank(e.search, t.tsq) AS rank
        FROM {TABLE} AS e JOIN terms AS t ON e.search @@ t.tsq
        WHERE e.search @@ ({{query}}) AND {{scope}}
          AND e.status IN ({_ELIGIBLE}) AND e.confidence >= %s AND (e.expires_at IS NULL OR e.expires_at > %s)
    ),
    rarity AS (
        SELECT i, ln(1 + (SELECT count(DISTINCT pk) FROM hits)::float8 / count(*)) AS idf FROM hits GROUP BY i
    ),
    scores AS (
        SELECT h.pk, sum(r.idf * h.rank) AS score FROM hits AS h JOIN rarity AS r ON r.i = h.i
        GROUP BY h.pk ORDER BY score DESC, h.pk LIMIT %s
    )
    SELECT e.data, s.score, e.task_terms || ' ' || e.summary_terms || ' ' || e.lesson_terms
    FROM scores AS s JOIN {TABLE} AS e ON e.pk = s.pk
    ORDER BY s.score DESC, s.pk
"""


def row(experience: Experience) -> tuple[Any, ...]:
    """The column values of one record, in ``_COLUMNS`` order."""
    return record_values(experience, lambda instant: instant)


def _column(part: str) -> str:
    return f'e."{part}"'


def _scope_sql(scope: Scope) -> tuple[str, list[Any]]:
    """The predicate (on alias ``e``) for the rows ``scope`` sees, and its parameters."""
    return scope_predicate(scope, "%s", _column)


def redact(url: str) -> str:
    """The URL without a password, for messages."""
    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)


class PostgresStore:
    """A ``Store`` in a PostgreSQL database. Opening connects once to check and migrate the
    schema (a clear StoreError when it cannot), then keeps a pool of up to ``max_size``."""

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 30.0) -> None:
        self.url = re.sub(r"^(postgres(?:ql)?)\+[a-z0-9]+://", r"\1://", url)
        self._where = redact(self.url)
        self._decode = Decoder(self._where)
        try:
            with psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT) as db:
                migrate(db, self._where)
        except psycopg.Error as exc:
            raise StoreError(f"cannot open the PostgreSQL store at {self._where}: {exc}".strip()) from exc
        self._pool: ConnectionPool[psycopg.Connection[tuple[Any, ...]]] | None = ConnectionPool(
            self.url,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT},
            open=True,
        )

    def __repr__(self) -> str:
        return f"PostgresStore({self._where!r})"

    # transactions

    @contextmanager
    def _transaction(self, tenant: str | None) -> Iterator[psycopg.Cursor[tuple[Any, ...]]]:
        """A cursor in one transaction that sees ``tenant``'s rows only (every tenant's, read
        only, when None)."""
        if self._pool is None:
            raise StoreError(f"the store at {self._where} is closed")
        try:
            with self._pool.connection() as db, db.transaction(), db.cursor() as cur:
                if tenant is None:
                    cur.execute("SELECT set_config('afteraction.all_tenants', 'on', true)")
                else:
                    cur.execute("SELECT set_config('afteraction.tenant', %s, true)", (tenant,))
                yield cur
        except psycopg.Error as exc:
            raise StoreError(f"the PostgreSQL store at {self._where} failed: {exc}") from exc

    # writes

    def put(self, experience: Experience) -> bool:
        return self.put_many([experience]) == 1

    def put_many(self, experiences: Sequence[Experience]) -> int:
        by_tenant: dict[str, list[tuple[Any, ...]]] = {}
        for i, experience in enumerate(experiences):
            if not isinstance(experience, Experience):
                raise ValidationError(f"experiences[{i}]", f"must be an Experience, got {type(experience).__name__}")
            by_tenant.setdefault(experience.scope.tenant, []).append(row(experience))
        if not by_tenant:
            return 0
        inserted = 0
        with self._transaction(next(iter(by_tenant))) as cur:
            for tenant, rows in by_tenant.items():
                cur.execute("SELECT set_config('afteraction.tenant', %s, true)", (tenant,))
                for values in rows:
                    cur.execute(_INSERT, values)
                    inserted += cur.rowcount
        return inserted

    def update(self, experience: Experience, *, expected_revision: int) -> Experience:
        updated = replace(experience, revision=expected_revision + 1)
        tenant, id = experience.scope.tenant, experience.id
        with self._transaction(tenant) as cur:
            cur.execute(_UPDATE, (*row(updated), tenant, id, expected_revision))
            if cur.rowcount == 1:
                return updated
            cur.execute(f"SELECT revision FROM {TABLE} WHERE tenant = %s AND id = %s", (tenant, id))
            found = cur.fetchone()
        if found is None:
            raise NotFoundError(f"no record {id!r} in tenant {tenant!r} to update")
        raise ConflictError(
            f"record {id!r} in tenant {tenant!r} is at revision {found[0]}, not {expected_revision}; "
            "read it again and retry"
        )

    # reads

    def get(self, scope: Scope, id: str) -> Experience | None:
        where, params = _scope_sql(scope)
        with self._transaction(scope.tenant) as cur:
            cur.execute(f"SELECT e.data FROM {TABLE} AS e WHERE {where} AND e.id = %s", (*params, id))
            found = cur.fetchone()
        return None if found is None else self._decode(found[0])

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
        where, params = _scope_sql(scope)
        query = " || ".join(["plainto_tsquery('simple', %s)"] * len(stems))
        sql = _SEARCH.format(query=query, scope=where)
        with self._transaction(scope.tenant) as cur:
            # never a prepared statement: a generic plan for this query can cost a hundred times more
            cur.execute(sql, (stems, *stems, *params, min_confidence, now, limit), prepare=False)
            rows = cur.fetchall()
        return [Candidate(self._decode(data), float(score), frozenset(terms.split())) for data, score, terms in rows]

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
        with self._transaction(scope.tenant) as cur:
            cur.execute(sql, (*params, limit, offset))
            rows = cur.fetchall()
        return [self._decode(data) for (data,) in rows]

    def count(self, scope: Scope) -> int:
        where, params = _scope_sql(scope)
        with self._transaction(scope.tenant) as cur:
            cur.execute(f"SELECT count(*) FROM {TABLE} AS e WHERE {where}", params)
            found = cur.fetchone()
        return 0 if found is None else int(found[0])

    def iter_all(self, tenant: str | None = None) -> Iterator[Experience]:
        """Pages of rows in (tenant, id) order, each page its own transaction."""
        last: tuple[str, str] = (tenant or "", "")
        tenant_sql = "" if tenant is None else "tenant = %s AND "
        sql = (
            f"SELECT tenant, id, data FROM {TABLE} WHERE {tenant_sql}(tenant, id) > (%s, %s) "
            "ORDER BY tenant, id LIMIT %s"
        )
        while True:
            with self._transaction(tenant) as cur:
                cur.execute(sql, (*([tenant] if tenant is not None else []), *last, _PAGE))
                page = cur.fetchall()
            for _, _, data in page:
                yield self._decode(data, remember=False)
            if len(page) < _PAGE:
                return
            last = (page[-1][0], page[-1][1])

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
