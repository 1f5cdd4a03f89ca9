"""SQLiteStore: one embedded database file (WAL), zero servers.

One writing connection under a lock, and reads on connections of their own beside it (WAL), so
reads and writes of one process never wait for each other (``sqlite_access``); every write runs
in ``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any error. The schema and its migrations
live in ``sqlite_schema``.

Search is FTS5 BM25 (task weighted 2) over the Snowball stems of task, summary and lesson, with
scope and eligibility in the same SQL statement. On a large table a query is narrowed to the
rows holding its rarest terms (``search_text``, ``sqlite_terms``). BM25's statistics are those of the whole
index: rows of other scopes never appear in a result or a count, but they do count in the
document frequencies that weigh each term.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from afteraction.core.text import search_stems
from afteraction.errors import ConflictError, NotFoundError, StoreError, ValidationError
from afteraction.model import ELIGIBLE_STATUSES, Experience, Scope, Status
from afteraction.store import records, sqlite_delete, sqlite_terms, vector_table
from afteraction.store import sqlite_vectors as vectors
from afteraction.store._sql import COLUMNS, Decoder, lessons_query, record_values, scope_predicate
from afteraction.store.base import (
    Candidate,
    StoredVector,
    VectorModelInfo,
    check_ids,
    check_names,
    check_owner,
    check_page,
)
from afteraction.store.sqlite_access import Connections, Held
from afteraction.store.sqlite_connection import BUSY_TIMEOUT_MS as BUSY_TIMEOUT_MS  # sqlite_events reads it here
from afteraction.store.unreadable import read_past, say_unreadable

__all__ = ["SQLiteStore"]

_PAGE = 500
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)
_ELIGIBLE = ", ".join(f"'{status.value}'" for status in sorted(ELIGIBLE_STATUSES, key=lambda s: s.value))

_COLUMNS = ", ".join(COLUMNS)
#: Every row written takes the next ``written`` stamp (m007, m010; see ``vector_table.missing``).
_NEXT_STAMP = vector_table.NEXT_STAMP
_INSERT = (
    f"INSERT INTO experiences ({_COLUMNS}, written) VALUES ({', '.join('?' * len(COLUMNS))}, {_NEXT_STAMP}) "
    "ON CONFLICT (tenant, id) DO NOTHING"
)
_UPDATE = (
    "UPDATE experiences SET "
    + ", ".join(f"{column} = ?" for column in COLUMNS)
    + f", written = {_NEXT_STAMP} WHERE tenant = ? AND id = ? AND revision = ?"
)
_SEARCH = f"""
    SELECT {records.COLUMNS}, found.pk, found.bm25, e.task_terms || ' ' || e.summary_terms || ' ' || e.lesson_terms
    FROM (
        SELECT e.pk AS pk, bm25(experiences_fts, 2.0, 1.0, 1.0, 0.0) AS bm25
        FROM experiences_fts CROSS JOIN experiences AS e ON e.pk = experiences_fts.rowid
        WHERE experiences_fts MATCH ? AND {{scope}}
          AND e.status IN ({_ELIGIBLE}) AND e.confidence >= ? AND (e.expires_at IS NULL OR e.expires_at > ?)
        ORDER BY bm25, e.pk LIMIT ?
    ) AS found CROSS JOIN experiences AS e ON e.pk = found.pk
    ORDER BY found.bm25, found.pk
"""
# The same search over the ``?`` best-scored rows of the whole index only: FTS5 orders them by
# itself, and only those are looked up in the table (see ``sqlite_terms.CAPPED``).
_SEARCH_CAPPED = f"""
    SELECT {records.COLUMNS}, found.pk, found.bm25, e.task_terms || ' ' || e.summary_terms || ' ' || e.lesson_terms
    FROM (
        SELECT e.pk AS pk, best.bm25 AS bm25
        FROM (
            SELECT rowid AS pk, bm25(experiences_fts, 2.0, 1.0, 1.0, 0.0) AS bm25
            FROM experiences_fts WHERE experiences_fts MATCH ? ORDER BY bm25, rowid LIMIT ?
        ) AS best CROSS JOIN experiences AS e ON e.pk = best.pk
        WHERE {{scope}}
          AND e.status IN ({_ELIGIBLE}) AND e.confidence >= ? AND (e.expires_at IS NULL OR e.expires_at > ?)
        ORDER BY bm25, e.pk LIMIT ?
    ) AS found CROSS JOIN experiences AS e ON e.pk = found.pk
    ORDER BY found.bm25, found.pk
"""


def micros(value: datetime) -> int:
    """An instant as integer microseconds since the Unix epoch (UTC): how times are stored."""
    return (value - _EPOCH) // _MICROSECOND


def row(experience: Experience) -> tuple[Any, ...]:
    """The column values of one record, in ``_COLUMNS`` order."""
    return record_values(experience, micros)


def _column(part: str) -> str:
    return f"e.{part}"


def _scope_sql(scope: Scope) -> tuple[str, list[Any]]:
    """The predicate (on alias ``e``) for the rows ``scope`` sees, and its parameters."""
    return scope_predicate(scope, "?", _column)


def _any(stems: Sequence[str]) -> str:
    """An FTS5 expression matching any of the stems. Each is a quoted string, so no FTS syntax
    (quotes, ``*``, NEAR, AND, ``-``, ``:``, parentheses) survives."""
    return "(" + " OR ".join('"' + s.replace('"', '""') + '"' for s in stems) + ")"


class SQLiteStore:
    """A ``Store`` in one SQLite file. The parent directory is created when missing."""

    def __init__(self, path: str | Path, *, vector_index: vectors.IndexPolicy | None = None) -> None:
        # absolute: a relative path would name another file once the process changes directory
        self.path = str(path) if str(path) == ":memory:" else Path(path).expanduser().absolute()
        self._decode = Decoder(str(self.path))
        self._said: set[tuple[str, str]] = set()  # unreadable records logged (``missing_vectors``), once each
        self._scopes = records.ScopeCache()
        self.vectors = vectors.VectorSearch(
            self.path if isinstance(self.path, Path) else None, self._reading, vector_index
        )
        self._connections = Connections(self.path, forked=self.vectors.after_fork)

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    def _searched(self, row: tuple[Any, ...]) -> Experience:
        return records.searched(self._decode, self._scopes, row)

    # transactions (see sqlite_access)

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """A read connection, each statement its own snapshot."""
        with self._connections.reading() as held:
            yield held.db

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read connection, every statement of the block in one snapshot."""
        with self._connections.snapshot() as held:
            yield held.db

    def _writing(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._connections.writing()

    def _configure(self, *pragmas: str) -> None:
        """Set ``PRAGMA``s of the writing connection."""
        self._connections.configure(*pragmas)

    def _checkpoint_elsewhere(self) -> None:
        """The writer stops checkpointing and bounding the WAL: the caller's thread does (``sqlite_events``)."""
        self._connections.checkpoint_elsewhere()

    # writes

    def put(self, experience: Experience) -> bool:
        return self.put_many([experience]) == 1

    def put_many(self, experiences: Sequence[Experience]) -> int:
        for i, experience in enumerate(experiences):
            if not isinstance(experience, Experience):
                raise ValidationError(f"experiences[{i}]", f"must be an Experience, got {type(experience).__name__}")
        rows = [row(experience) for experience in experiences]
        if not rows:
            return 0
        with self._writing() as db:
            return db.executemany(_INSERT, rows).rowcount

    def update(self, experience: Experience, *, expected_revision: int) -> Experience:
        updated = replace(experience, revision=expected_revision + 1)
        tenant, id = experience.scope.tenant, experience.id
        with self._writing() as db:
            if db.execute(_UPDATE, (*row(updated), tenant, id, expected_revision)).rowcount == 1:
                return updated
            found = db.execute("SELECT revision FROM experiences WHERE tenant = ? AND id = ?", (tenant, id)).fetchone()
        if found is None:
            raise NotFoundError(f"no record {id!r} in tenant {tenant!r} to update")
        raise ConflictError(
            f"record {id!r} is at revision {found[0]}, not {expected_revision}: "
            "it changed since it was read; read it again and retry"
        )

    def delete(self, scope: Scope, ids: Sequence[str]) -> int:
        """See ``Store``; the text-search rows go by trigger, the vectors and their index files in
        ``sqlite_delete``."""
        wanted = check_ids(ids)
        if not wanted:
            return 0
        chosen = sqlite_delete.by_ids(scope, wanted, _column)
        return len(sqlite_delete.run(self._writing, self.vectors, scope.tenant, chosen))

    def delete_user(self, tenant: str, user: str) -> list[str]:
        """See ``Store``: as ``delete`` does, for every record of the user."""
        tenant, user = check_owner(tenant, user)
        return sqlite_delete.run(self._writing, self.vectors, tenant, sqlite_delete.by_user(tenant, user))

    # reads

    def get(self, scope: Scope, id: str) -> Experience | None:
        where, params = _scope_sql(scope)
        with self._reading() as db:
            found = db.execute(f"SELECT e.data FROM experiences AS e WHERE e.id = ? AND {where}", (id, *params))
            data = found.fetchone()
            return None if data is None else self._decode(data[0])

    def search_text(
        self,
        scope: Scope,
        terms: Sequence[str],
        *,
        now: datetime,
        limit: int = 50,
        min_confidence: float = 0.5,
    ) -> list[Candidate]:
        """BM25 over the rows that hold any of the terms. When those rows are many (see ``_split``),
        the rarest terms choose the rows and every term scores them; rows holding only the
        commonest terms are added when the rare ones give fewer than ``limit`` results. Scores
        are exact, except past ``sqlite_terms.HEAVY`` postings of all the terms (lessons in the
        hundreds of thousands), where the rare terms alone score the rows they choose."""
        stems = search_stems(terms)
        if not stems or limit <= 0:
            return []
        where, params = _scope_sql(scope)
        sql = _SEARCH.format(scope=where)
        tail = (*params, min_confidence, micros(now), limit)
        with self._connections.snapshot() as held:  # one snapshot for every statement below
            db = held.db
            rare, common = self._split(held, stems, limit)
            if not common or sqlite_terms.heavy(db, held.counts, stems):
                rows = self._best(held, where, rare, tail)
                if common and len(rows) < limit:
                    rest = db.execute(sql, (f"{_any(common)} NOT {_any(rare)}", *tail)).fetchall()
                    rows = rows + rest[: limit - len(rows)]
            else:
                # The rows holding a rare term, scored on every term: those that also hold a common
                # one, and those that hold none (a term a row lacks adds exactly 0 to its BM25, so
                # both are scored as one query would). Two queries, not one that matches every row
                # (the anchor) and so makes BM25 count every row for that term's document frequency.
                both = db.execute(sql, (f"{_any(rare)} AND {_any(common)}", *tail)).fetchall()
                only = db.execute(sql, (f"{_any(rare)} NOT {_any(common)}", *tail)).fetchall()
                rows = sorted(both + only, key=lambda found: (found[-2], found[-3]))[:limit]
                if len(rows) < limit:
                    rest = db.execute(sql, (f"{_any(common)} NOT {_any(rare)}", *tail)).fetchall()
                    rows = sorted(rows + rest, key=lambda found: found[-2])[:limit]
        return [Candidate(self._searched(row), -row[-2], frozenset(row[-1].split())) for row in rows]

    def _best(self, held: Held, where: str, stems: list[str], tail: tuple[Any, ...]) -> list[Any]:
        """The search for any of ``stems``. When they hold very many rows, first over the best
        ``CAPPED`` of them by BM25 alone: if that gives the ``limit`` rows asked, they are exactly
        the best the scope may use (any other row of the scope scores worse than all of them)."""
        match, db = _any(stems), held.db
        if sqlite_terms.many(db, held.counts, stems):
            capped = _SEARCH_CAPPED.format(scope=where)
            rows = db.execute(capped, (match, sqlite_terms.CAPPED, *tail)).fetchall()
            if len(rows) >= tail[-1]:
                return rows
        return db.execute(_SEARCH.format(scope=where), (match, *tail)).fetchall()

    def _split(self, held: Held, stems: list[str], limit: int) -> tuple[list[str], list[str]]:
        return sqlite_terms.split(held.db, held.counts, stems, limit)

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
        sql, params = lessons_query(scope, status, table="experiences", mark="?", column=_column)
        with self._reading() as db:
            rows = db.execute(sql, (*params, limit, offset)).fetchall()
            return [self._decode(data) for (data,) in rows]

    def count(self, scope: Scope) -> int:
        where, params = _scope_sql(scope)
        with self._reading() as db:
            return int(db.execute(f"SELECT count(*) FROM experiences AS e WHERE {where}", params).fetchone()[0])

    def iter_all(self, tenant: str | None = None) -> Iterator[Experience]:
        """Pages of rows in (tenant, id) order; no connection is held between pages."""
        last: tuple[str, str] = (tenant or "", "")
        tenant_sql = "" if tenant is None else "tenant = ? AND "
        sql = (
            f"SELECT tenant, id, data FROM experiences WHERE {tenant_sql}(tenant, id) > (?, ?) "
            "ORDER BY tenant, id LIMIT ?"
        )
        while True:
            with self._reading() as db:
                page = db.execute(sql, (*([tenant] if tenant is not None else []), *last, _PAGE)).fetchall()
            for _, _, data in page:
                yield self._decode(data, remember=False)
            if len(page) < _PAGE:
                return
            last = (page[-1][0], page[-1][1])

    # vectors (see sqlite_vectors)

    def put_vectors(self, vectors_: Sequence[StoredVector]) -> int:
        rows = vector_table.encode(vectors_)
        if not rows:
            return 0
        with self._writing() as db:
            return vector_table.put(db, rows)

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
        if limit <= 0:
            return []
        with self._snapshot() as db:  # one snapshot: the index catches up to the rows the filter reads
            found = self.vectors.search(
                db, scope, model, vector, now=micros(now), limit=limit, min_confidence=min_confidence
            )
        return [Candidate(self._searched(row), 0.0, frozenset(row[-2].split()), row[-1]) for row in found]

    def missing_vectors(
        self,
        model: str,
        *,
        limit: int = 256,
        tenant: str | None = None,
        after: tuple[str, str] | None = None,
        unreadable: list[tuple[str, str, str]] | None = None,
    ) -> list[Experience]:
        """See ``VectorStore``. Reads only the records written since the model's mark, and moves
        the mark forward at the end of a pass (a short page; a record stored unreadable holds it
        back), so that finding nothing to do in a fully indexed store is a few index seeks."""
        move = None
        with self._snapshot() as db:  # one snapshot for the page and the mark
            rows = functools.partial(vector_table.missing, db, model, tenant)
            found = read_past(rows, lambda data: self._decode(data, remember=False), limit, after)
            if tenant is None and found.end:
                move = vector_table.next_mark(db, model, nothing_left=found.empty and after is None)
        if move is not None and move[1] > move[0]:
            with self._writing() as db:
                vector_table.move_mark(db, model, move[1])
        say_unreadable(self._said, found.unreadable, unreadable)
        return found.records

    def count_missing_vectors(self, model: str, *, tenant: str | None = None) -> int:
        """How many records ``missing_vectors`` would still return (for a progress bar)."""
        with self._reading() as db:
            return vector_table.count_missing(db, model, tenant)

    def build_vector_index(
        self, model: str, *, tenant: str | None = None, rebuild: bool = False
    ) -> list[vectors.IndexState]:
        """Bring the vector index of ``model`` (of each tenant, or one) up to date now and save
        it beside the database: an ANN index is built when ``rebuild`` or when one is due
        (``IndexPolicy.ann_from``) and none valid is saved. One state per tenant with vectors."""
        with self._snapshot() as db:
            return self.vectors.build(db, model, tenant, rebuild=rebuild)

    def vector_models(self, *, tenant: str | None = None) -> list[VectorModelInfo]:
        check_names(None, tenant)
        with self._reading() as db:
            return vector_table.models(db, tenant)

    def drop_vectors(self, model: str, *, tenant: str | None = None) -> int:
        """See ``VectorStore``: the rows and the model's mark in one transaction; its in-process
        indexes and their files beside the database inside it (a cache: on a failed commit,
        rebuilt from the rows kept)."""
        check_names(model, tenant)
        return sqlite_delete.drop(self._writing, self.vectors, model, tenant)

    def close(self) -> None:
        self.vectors.stop()  # a background index build is abandoned: the next process rebuilds it
        self._connections.close(self._save_indexes)

    def _save_indexes(self, db: sqlite3.Connection) -> None:
        with suppress(OSError, StoreError):
            self.vectors.close(db)
