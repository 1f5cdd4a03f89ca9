"""PostgresEvents: the ``EventStore`` in PostgreSQL, shared by every replica of the service.

It runs on a ``PostgresStore``'s pool and transactions, so each transaction sets
``afteraction.tenant`` first and row-level security (migration m003_events) hides every other
tenant's events, sessions and counts; the queries also name the tenant. A write inserts each
group's events with one ``INSERT … SELECT FROM unnest(…) ON CONFLICT DO NOTHING RETURNING id``:
the ids returned are the new ones, so two replicas taking the same event at once store it
once and only one of them calls it new. Session rows and counts are upserted in id order, so
concurrent writers take their row locks in the same order. The rules it keeps are those of
``afteraction.store.events``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import datetime
from typing import Any, TypeVar

import psycopg

from afteraction.errors import StoreError
from afteraction.model import Event
from afteraction.store.events import (
    ReadsThroughReader,
    Session,
    SessionReader,
    Stats,
    StoredEvent,
    by_tenant,
    cutoff,
    event_json,
    micros,
    session_ids,
    session_rows,
    split,
    type_counts,
)
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_privileges import EVENT_DELETE_PRIVILEGES, require_delete
from afteraction.store.postgres_schema import EVENT_COUNTS, EVENTS, SESSIONS
from afteraction.store.postgres_spans import drop_received_before, drop_traces
from afteraction.store.spans import session_traces

__all__ = ["TREE_PREFETCH", "PostgresEvents"]

_INSERT_EVENTS = f"""
    INSERT INTO {EVENTS} (tenant, id, session_id, trace_id, parent_session_id, type, at, data)
    SELECT %s, * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::bigint[], %s::text[])
    ON CONFLICT (tenant, id) DO NOTHING
    RETURNING id
"""
_UPSERT_SESSIONS = f"""
    INSERT INTO {SESSIONS} AS s (tenant, id, trace_id, parent_session_id, source, started_at, ended_at, events)
    SELECT %s, * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::bigint[], %s::bigint[], %s::bigint[])
    ON CONFLICT (tenant, id) DO UPDATE SET
        source = CASE WHEN excluded.started_at < s.started_at THEN excluded.source ELSE s.source END,
        started_at = least(s.started_at, excluded.started_at),
        ended_at = greatest(s.ended_at, excluded.ended_at),
        events = s.events + excluded.events,
        parent_session_id = coalesce(s.parent_session_id, excluded.parent_session_id)
"""
_UPSERT_COUNTS = f"""
    INSERT INTO {EVENT_COUNTS} AS c (tenant, type, events)
    SELECT %s, * FROM unnest(%s::text[], %s::bigint[])
    ON CONFLICT (tenant, type) DO UPDATE SET events = c.events + excluded.events
"""
_COLUMNS = "id, trace_id, parent_session_id, source, started_at, ended_at, events"
_RETRIES = 3  # a deadlock or serialization failure between replicas is retried
_DELETE_SESSIONS = f"DELETE FROM {SESSIONS} WHERE tenant = %s AND id = ANY(%s::text[]) RETURNING id"
#: ``prune``'s: the cutoff in the DELETE itself. Under READ COMMITTED a row a writer updated while this waited for its
#: lock is checked again as that writer left it, so a session whose new event (acknowledged, inside the window)
#: moved its end past the cutoff stays, with its events.
_DELETE_ENDED = f"{_DELETE_SESSIONS.removesuffix(' RETURNING id')} AND ended_at < %s RETURNING id"
_DELETE_EVENTS = f"""
    WITH gone AS (DELETE FROM {EVENTS} WHERE tenant = %s AND session_id = ANY(%s::text[]) RETURNING type)
    SELECT type, count(*) FROM gone GROUP BY type ORDER BY type
"""
_UNCOUNT = f"""
    UPDATE {EVENT_COUNTS} AS c SET events = c.events - u.n
    FROM unnest(%s::text[], %s::bigint[]) AS u(t, n) WHERE c.tenant = %s AND c.type = u.t
"""
_ENDED = f"SELECT tenant, id FROM {SESSIONS} WHERE ended_at < %s"
T = TypeVar("T")


#: Sessions a tree's first statement fetches with its root; a larger tree is walked level by level.
TREE_PREFETCH = 256
_SUBTREE = f"""
    WITH RECURSIVE subtree AS (
        SELECT {_COLUMNS} FROM {SESSIONS} WHERE tenant = %s AND id = %s
        UNION
        SELECT {", ".join(f"s.{c}" for c in _COLUMNS.split(", "))}
        FROM subtree AS t JOIN {SESSIONS} AS s ON s.tenant = %s AND s.parent_session_id = t.id
    )
    SELECT {_COLUMNS} FROM (SELECT * FROM subtree LIMIT %s) AS found ORDER BY started_at, id
"""


class _Reader:
    """Session lookups of one tenant for one walk. Its first statement goes in one round trip
    with the tenant setting (``PostgresStore._run``); ``session`` fetches with the root its
    whole subtree when it holds at most ``TREE_PREFETCH`` sessions (a recursive query, which
    ``UNION`` keeps from looping on a cycle of parents), and ``children`` then answers from it:
    a tree costs one round trip instead of one per level plus BEGIN, the setting and COMMIT.
    Any later statement (a larger tree) runs in one transaction opened for the rest of the walk."""

    def __init__(self, store: PostgresStore, tenant: str, rest: ExitStack) -> None:
        self._store, self._tenant, self._rest = store, tenant, rest
        self._cur: psycopg.Cursor[tuple[Any, ...]] | None = None
        self._first = True
        self._subtree: list[Session] = []  # a whole subtree, by start then id, when one was fetched
        self._reached: set[str] = set()

    def _sessions(self, sql: str, params: Sequence[Any]) -> list[Session]:
        if self._first:
            self._first = False
            [(_, rows)] = self._store._run(self._tenant, [(sql, params)])
        else:
            if self._cur is None:
                self._cur = self._rest.enter_context(self._store._transaction(self._tenant))
            self._cur.execute(sql, params)
            rows = self._cur.fetchall()
        return [Session(*row) for row in rows]

    def session(self, id: str) -> Session | None:
        found = self._sessions(_SUBTREE, (self._tenant, id, self._tenant, TREE_PREFETCH + 1))
        root = next((session for session in found if session.id == id), None)
        if root is not None and len(found) <= TREE_PREFETCH:
            self._subtree, self._reached = found, {session.id for session in found}
        return root

    def children(self, parents: Sequence[str], *, limit: int) -> list[Session]:
        wanted = set(parents)
        if wanted and wanted <= self._reached:  # every child of a session of the subtree is in it
            return [session for session in self._subtree if session.parent_session_id in wanted][:limit]
        sql = (
            f"SELECT {_COLUMNS} FROM {SESSIONS} WHERE tenant = %s AND parent_session_id = ANY(%s::text[]) "
            "ORDER BY started_at, id LIMIT %s"
        )
        return self._sessions(sql, (self._tenant, list(parents), limit))

    def trace(self, trace_id: str, *, limit: int) -> list[Session]:
        sql = f"SELECT {_COLUMNS} FROM {SESSIONS} WHERE tenant = %s AND trace_id = %s ORDER BY started_at, id LIMIT %s"
        return self._sessions(sql, (self._tenant, trace_id, limit))


class PostgresEvents(ReadsThroughReader):
    """The event store over an open ``PostgresStore`` (closing this closes it)."""

    def __init__(self, store: PostgresStore) -> None:
        store.require_service()  # the GRANTs to run when the role lacks the service's tables
        self.store = store

    def close(self) -> None:
        self.store.close()

    # writes

    def add_many(self, tenant: str, events: Sequence[Event]) -> list[bool]:
        return self.add_groups([(tenant, events)])[0]

    def add_groups(self, groups: Sequence[tuple[str, Sequence[Event]]]) -> list[list[bool]]:
        if not groups:
            return []
        for attempt in range(_RETRIES):
            try:
                with self.store._transaction(groups[0][0]) as cur:
                    added = {tenant: self._add(cur, tenant, events) for tenant, events in by_tenant(groups).items()}
                return split(groups, added)
            except StoreError as exc:
                transient = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)
                if attempt == _RETRIES - 1 or not isinstance(exc.__cause__, transient):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _add(self, cur: psycopg.Cursor[tuple[Any, ...]], tenant: str, events: Sequence[Event]) -> list[bool]:
        cur.execute("SELECT set_config('afteraction.tenant', %s, true)", (tenant,))
        first: dict[str, int] = {}
        for index, event in enumerate(events):
            first.setdefault(event.id, index)
        unique = [events[index] for index in first.values()]
        if not unique:
            return []
        columns: list[list[Any]] = [[] for _ in range(7)]
        for e in unique:
            row = (
                e.id,
                e.session_id,
                e.trace_id,
                e.parent_session_id or None,
                e.type,
                micros(e.instant),
                event_json(e),
            )
            for column, value in zip(columns, row, strict=True):
                column.append(value)
        cur.execute(_INSERT_EVENTS, (tenant, *columns))
        inserted = {id for (id,) in cur.fetchall()}
        new = [event for event in unique if event.id in inserted]
        rows = sorted(session_rows(new).items())
        if rows:
            sessions = [list(column) for column in zip(*((id, *r.values()) for id, r in rows), strict=True)]
            cur.execute(_UPSERT_SESSIONS, (tenant, *sessions))
            counts = sorted(type_counts(new).items())
            cur.execute(_UPSERT_COUNTS, (tenant, [t for t, _ in counts], [n for _, n in counts]))
        return [first[event.id] == index and event.id in inserted for index, event in enumerate(events)]

    # deletes

    def delete_sessions(self, tenant: str, ids: Sequence[str]) -> int:
        wanted = session_ids(ids)
        if not wanted:
            return 0
        return self._deleting(tenant, lambda cur: _delete(cur, tenant, wanted))

    def prune(self, tenant: str | None, before: datetime) -> int:
        """One transaction: with ``tenant`` None it reads every tenant's ended sessions (the
        ``all_tenants`` setting reads only), then deletes each tenant's as that tenant, since
        the DELETE policies let a transaction delete the rows of its ``afteraction.tenant`` alone;
        then the OTLP buffer's spans received before the cutoff, likewise. The DELETE checks the
        cutoff again (``_DELETE_ENDED``), and only the events of the sessions it deleted go: a
        session that took a new event since the read keeps it."""
        end = cutoff(before)

        def prune(cur: psycopg.Cursor[tuple[Any, ...]]) -> int:
            sql, params = (_ENDED, (end,)) if tenant is None else (_ENDED + " AND tenant = %s", (end, tenant))
            cur.execute(sql + " ORDER BY tenant, id", params)
            found: dict[str, list[str]] = {}
            for owner, id in cur.fetchall():
                found.setdefault(str(owner), []).append(str(id))
            deleted = sum(_delete(cur, owner, ids, before=end) for owner, ids in found.items())
            drop_received_before(cur, tenant, end / 1_000_000)
            return deleted

        return self._deleting(tenant, prune)

    def _deleting(self, tenant: str | None, work: Callable[[psycopg.Cursor[tuple[Any, ...]]], T]) -> T:
        """``work`` in one transaction, retried on a deadlock with a writer; a role without DELETE
        on the event tables is told the GRANT, as an AppendOnlyError (asked for here, not at open)."""
        for attempt in range(_RETRIES):
            try:
                with self.store._transaction(tenant) as cur:
                    return work(cur)
            except StoreError as exc:
                if isinstance(exc.__cause__, psycopg.errors.InsufficientPrivilege):
                    self.store._retrying(
                        lambda db: require_delete(db, EVENT_DELETE_PRIVILEGES, what="sessions", who="deleting sessions")
                    )
                    raise  # pragma: no cover - the check names the grant; a role that has it was refused otherwise
                transient = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)
                if attempt == _RETRIES - 1 or not isinstance(exc.__cause__, transient):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    # reads

    def _rows(self, tenant: str, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self.store._transaction(tenant) as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    @contextmanager
    def reading(self, tenant: str) -> Iterator[SessionReader]:
        with ExitStack() as rest:
            yield _Reader(self.store, tenant, rest)

    def session(self, tenant: str, id: str) -> Session | None:
        rows = self._rows(tenant, f"SELECT {_COLUMNS} FROM {SESSIONS} WHERE tenant = %s AND id = %s", (tenant, id))
        return Session(*rows[0]) if rows else None

    def sessions(self, tenant: str, *, limit: int, before: tuple[int, str] | None = None) -> list[Session]:
        sql = f"SELECT {_COLUMNS} FROM {SESSIONS} WHERE tenant = %s"
        params: list[Any] = [tenant]
        if before is not None:
            sql += " AND (started_at, id) < (%s, %s)"
            params.extend(before)
        sql += " ORDER BY started_at DESC, id DESC LIMIT %s"
        return [Session(*row) for row in self._rows(tenant, sql, (*params, limit))]

    def events(
        self,
        tenant: str,
        session_id: str | None,
        *,
        limit: int,
        after: tuple[int, int] | None = None,
        types: Sequence[str] = (),
        start: int | None = None,
        end: int | None = None,
    ) -> list[StoredEvent]:
        sql = f"SELECT at, pk, type, data FROM {EVENTS} WHERE tenant = %s"
        params: list[Any] = [tenant]
        for clause, value in (
            (" AND session_id = %s", session_id),
            (" AND at >= %s", start),
            (" AND at < %s", end),
            (" AND type = ANY(%s)", list(types) or None),
        ):
            if value is not None:
                sql += clause
                params.append(value)
        if after is not None:
            sql += " AND (at, pk) > (%s, %s)"
            params.extend(after)
        sql += " ORDER BY at, pk LIMIT %s"
        return [StoredEvent(*row) for row in self._rows(tenant, sql, (*params, limit))]

    def stats(self, tenant: str) -> Stats:
        with self.store._transaction(tenant) as cur:
            cur.execute(f"SELECT type, events FROM {EVENT_COUNTS} WHERE tenant = %s", (tenant,))
            by_type = {str(type): int(n) for type, n in cur.fetchall()}
            cur.execute(f"SELECT count(*) FROM {SESSIONS} WHERE tenant = %s", (tenant,))
            found = cur.fetchone()
        return Stats(by_type=by_type, sessions=0 if found is None else int(found[0]))


def _delete(cur: psycopg.Cursor[tuple[Any, ...]], tenant: str, ids: Sequence[str], *, before: int | None = None) -> int:
    """Delete the tenant's sessions ``ids`` (those that ended before ``before`` only, when given: ``prune``) with
    their events, as that tenant, and take those events off the tenant's counts (a count at zero goes); forget the
    spans the OTLP buffer holds for their traces, which would bring them back once placed (``store.spans``): in
    the caller's transaction. The session rows go first, so a writer adding to one of them waits for this
    transaction; a prune deletes the events of the sessions its DELETE returned, and no others."""
    cur.execute("SELECT set_config('afteraction.tenant', %s, true)", (tenant,))
    if before is None:
        cur.execute(_DELETE_SESSIONS, (tenant, list(ids)))
    else:
        cur.execute(_DELETE_ENDED, (tenant, list(ids), before))
    gone = sorted(str(id) for (id,) in cur.fetchall())
    drop_traces(cur, tenant, session_traces(ids if before is None else gone))
    if not gone:
        return 0
    cur.execute(_DELETE_EVENTS, (tenant, gone))
    counts = [(str(type), int(n)) for type, n in cur.fetchall()]
    if counts:
        cur.execute(_UNCOUNT, ([t for t, _ in counts], [n for _, n in counts], tenant))
        cur.execute(f"DELETE FROM {EVENT_COUNTS} WHERE tenant = %s AND events <= 0", (tenant,))
    return len(gone)
