"""SQLiteEvents: the ``EventStore`` in the same SQLite file as the lessons.

It shares the ``SQLiteStore``'s connections: its writer (so one process has one) and its readers. The
tables are those of migrations m003_events and m005_event_reads: ``events`` (unique per tenant
and id), ``sessions`` (one row per session, kept current by the ingest) and ``event_counts``.
The rules it keeps are those of ``afteraction.store.events``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any

from afteraction.model import Event
from afteraction.store.events import (
    MAX_TREE_DEPTH,
    MAX_TREE_SESSIONS,
    ReadsThroughReader,
    Session,
    SessionReader,
    Stats,
    StoredEvent,
    Tree,
    by_tenant,
    cutoff,
    event_json,
    fresh,
    micros,
    session_ids,
    session_rows,
    split,
    type_counts,
)
from afteraction.store.spans import session_traces
from afteraction.store.sqlite import BUSY_TIMEOUT_MS, SQLiteStore
from afteraction.store.sqlite_access import erasing, truncate_wal, wal_over_limit
from afteraction.store.sqlite_spans import drop_received_before, drop_traces

__all__ = ["MAX_TREE_DEPTH", "MAX_TREE_SESSIONS", "SQLiteEvents", "Session", "Tree"]

_CHUNK = 500  # ids per IN (...) list
_INSERT_EVENT = (
    "INSERT INTO events (tenant, id, session_id, trace_id, parent_session_id, type, at, data) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, id) DO NOTHING"
)
# In an UPDATE every expression reads the row as it was, so ``source`` compares the old start.
_UPSERT_SESSION = """
    INSERT INTO sessions (tenant, id, trace_id, parent_session_id, source, started_at, ended_at, events)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant, id) DO UPDATE SET
        source = CASE WHEN excluded.started_at < started_at THEN excluded.source ELSE source END,
        started_at = min(started_at, excluded.started_at),
        ended_at = max(ended_at, excluded.ended_at),
        events = events + excluded.events,
        parent_session_id = coalesce(parent_session_id, excluded.parent_session_id)
"""
_UPSERT_COUNT = (
    "INSERT INTO event_counts (tenant, type, events) VALUES (?, ?, ?) "
    "ON CONFLICT (tenant, type) DO UPDATE SET events = events + excluded.events"
)
_COLUMNS = "id, trace_id, parent_session_id, source, started_at, ended_at, events"


class _Checkpointer:
    """Copies the WAL into the database file from a thread of its own, on its own connection,
    so the fsyncs of a checkpoint never stall a commit (the writer's connection no longer
    checkpoints by itself). PASSIVE: it never waits for, nor blocks, a reader or the writer;
    but past ``sqlite_access.WAL_LIMIT`` it truncates the WAL (TRUNCATE, waiting at most
    ``TRUNCATE_WAIT_MS`` for the readers then in it), which readers that never pause would
    otherwise keep from ever starting over (see ``sqlite_access``)."""

    def __init__(self, path: Path, every: float) -> None:
        self._path, self._every = path, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="afteraction-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            db = sqlite3.connect(self._path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except sqlite3.Error:  # the writer's connection checkpoints at close anyway
            return
        wal = Path(f"{self._path}-wal")
        with closing(db):
            while not self._stop.wait(self._every):
                if wal_over_limit(wal):
                    truncate_wal(db)
                    continue
                with suppress(sqlite3.Error):
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


class _Reader:
    """Session lookups of one tenant in one read snapshot (one consistent view for a walk)."""

    def __init__(self, db: sqlite3.Connection, tenant: str) -> None:
        self._db, self._tenant = db, tenant

    def session(self, id: str) -> Session | None:
        found = self._db.execute(f"SELECT {_COLUMNS} FROM sessions WHERE tenant = ? AND id = ?", (self._tenant, id))
        values = found.fetchone()
        return None if values is None else Session(*values)

    def children(self, parents: Sequence[str], *, limit: int) -> list[Session]:
        # By the parent index: without statistics the planner would rather walk the tenant's
        # sessions in start order (no sort needed), which grows with every session stored.
        found: list[Session] = []
        for start in range(0, len(parents), _CHUNK):
            chunk = parents[start : start + _CHUNK]
            sql = (
                f"SELECT {_COLUMNS} FROM sessions INDEXED BY sessions_parent "
                f"WHERE tenant = ? AND parent_session_id IN ({', '.join('?' * len(chunk))}) "
                "ORDER BY started_at, id LIMIT ?"
            )
            found.extend(Session(*row) for row in self._db.execute(sql, (self._tenant, *chunk, limit)))
        found.sort(key=lambda session: (session.started_at, session.id))
        return found[:limit]

    def trace(self, trace_id: str, *, limit: int) -> list[Session]:
        sql = f"SELECT {_COLUMNS} FROM sessions WHERE tenant = ? AND trace_id = ? ORDER BY started_at, id LIMIT ?"
        return [Session(*row) for row in self._db.execute(sql, (self._tenant, trace_id, limit))]


class SQLiteEvents(ReadsThroughReader):
    """The event store over an open ``SQLiteStore`` (closing this closes it).

    A commit is durable when it returns: the connection syncs the WAL at every commit
    (``synchronous = FULL``), so an acknowledged event survives a crash of the process and of
    the machine. Group commit (the server's writer) shares that sync among many requests. When
    ``checkpoint_every`` is given (seconds), checkpoints run in a thread of their own."""

    def __init__(self, store: SQLiteStore, *, checkpoint_every: float | None = None) -> None:
        self.store = store
        self._checkpointer: _Checkpointer | None = None
        store._configure("synchronous = FULL")
        if checkpoint_every is not None and isinstance(store.path, Path):
            store._checkpoint_elsewhere()
            self._checkpointer = _Checkpointer(store.path, checkpoint_every)

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.close()
        self.store.close()

    # writes

    def add_many(self, tenant: str, events: Sequence[Event]) -> list[bool]:
        return self.add_groups([(tenant, events)])[0]

    def add_groups(self, groups: Sequence[tuple[str, Sequence[Event]]]) -> list[list[bool]]:
        with self.store._writing() as db:
            added = {tenant: self._add(db, tenant, events) for tenant, events in by_tenant(groups).items()}
        return split(groups, added)

    def _add(self, db: sqlite3.Connection, tenant: str, events: Sequence[Event]) -> list[bool]:
        stored: set[str] = set()
        for start in range(0, len(events), _CHUNK):
            ids = [event.id for event in events[start : start + _CHUNK]]
            marks = ", ".join("?" * len(ids))
            sql = f"SELECT id FROM events WHERE tenant = ? AND id IN ({marks})"
            stored.update(id for (id,) in db.execute(sql, (tenant, *ids)))
        added = fresh(events, stored)
        new = [event for event, is_new in zip(events, added, strict=True) if is_new]
        instants = [micros(e.instant) for e in new]
        db.executemany(
            _INSERT_EVENT,
            [
                (tenant, e.id, e.session_id, e.trace_id, e.parent_session_id or None, e.type, at, event_json(e))
                for e, at in zip(new, instants, strict=True)
            ],
        )
        db.executemany(
            _UPSERT_SESSION,
            [(tenant, id, *r.values()) for id, r in session_rows(new, instants).items()],
        )
        db.executemany(_UPSERT_COUNT, [(tenant, type, n) for type, n in type_counts(new).items()])
        return added

    # deletes

    def delete_sessions(self, tenant: str, ids: Sequence[str]) -> int:
        wanted = session_ids(ids)
        if not wanted:
            return 0
        with self.store._writing() as db:
            changes = db.total_changes
            deleted = _delete(db, tenant, wanted)
            _erased_since(db, changes)
            return deleted

    def prune(self, tenant: str | None, before: datetime) -> int:
        end = cutoff(before)
        sql = "SELECT tenant, id FROM sessions WHERE ended_at < ?" + ("" if tenant is None else " AND tenant = ?")
        with self.store._writing() as db:  # the choice and the deletes in one transaction
            changes = db.total_changes
            found: dict[str, list[str]] = {}
            for owner, id in db.execute(sql, (end,) if tenant is None else (end, tenant)).fetchall():
                found.setdefault(owner, []).append(id)
            deleted = sum(_delete(db, owner, ids) for owner, ids in found.items())
            drop_received_before(db, tenant, end / 1_000_000)  # the OTLP buffer's spans of before too
            _erased_since(db, changes)
            return deleted

    # reads

    @contextmanager
    def reading(self, tenant: str) -> Iterator[SessionReader]:
        with self.store._snapshot() as db:
            yield _Reader(db, tenant)

    def session(self, tenant: str, id: str) -> Session | None:
        with self.reading(tenant) as reader:
            return reader.session(id)

    def sessions(self, tenant: str, *, limit: int, before: tuple[int, str] | None = None) -> list[Session]:
        sql = f"SELECT {_COLUMNS} FROM sessions WHERE tenant = ?"
        params: list[Any] = [tenant]
        if before is not None:
            sql += " AND (started_at, id) < (?, ?)"
            params.extend(before)
        sql += " ORDER BY started_at DESC, id DESC LIMIT ?"
        with self.store._reading() as db:
            rows = db.execute(sql, (*params, limit)).fetchall()
        return [Session(*found) for found in rows]

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
        sql = "SELECT at, pk, type, data FROM events WHERE tenant = ?"
        params: list[Any] = [tenant]
        if session_id is not None:
            sql += " AND session_id = ?"
            params.append(session_id)
        if start is not None:
            sql += " AND at >= ?"
            params.append(start)
        if end is not None:
            sql += " AND at < ?"
            params.append(end)
        if types:
            sql += f" AND type IN ({', '.join('?' * len(types))})"
            params.extend(types)
        if after is not None:
            sql += " AND (at, pk) > (?, ?)"
            params.extend(after)
        sql += " ORDER BY at, pk LIMIT ?"
        with self.store._reading() as db:
            rows = db.execute(sql, (*params, limit)).fetchall()
        return [StoredEvent(*row) for row in rows]

    def stats(self, tenant: str) -> Stats:
        with self.store._reading() as db:
            by_type = dict(db.execute("SELECT type, events FROM event_counts WHERE tenant = ?", (tenant,)).fetchall())
            sessions = db.execute("SELECT count(*) FROM sessions WHERE tenant = ?", (tenant,)).fetchone()[0]
        return Stats(by_type=by_type, sessions=int(sessions))


def _erased_since(db: sqlite3.Connection, changes: int) -> None:
    """Mark the transaction an erasure (``sqlite_access.erasing``: its commit truncates the WAL, so
    the deleted events leave the ``-wal`` file too) when it deleted any row since ``changes``."""
    if db.total_changes > changes:
        erasing(db)


def _delete(db: sqlite3.Connection, tenant: str, ids: Sequence[str]) -> int:
    """Delete the tenant's sessions ``ids`` with their events, and take those events off the
    tenant's counts (a count at zero goes); forget the spans the OTLP buffer holds for their
    traces, which would bring them back once placed (``store.spans``): in the caller's transaction."""
    drop_traces(db, tenant, session_traces(ids))
    deleted, gone = 0, dict[str, int]()
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        sql = f"SELECT type, count(*) FROM events WHERE tenant = ? AND session_id IN ({marks}) GROUP BY type"
        for type, n in db.execute(sql, (tenant, *chunk)):
            gone[type] = gone.get(type, 0) + n
        db.execute(f"DELETE FROM events WHERE tenant = ? AND session_id IN ({marks})", (tenant, *chunk))
        deleted += db.execute(f"DELETE FROM sessions WHERE tenant = ? AND id IN ({marks})", (tenant, *chunk)).rowcount
    db.executemany(
        "UPDATE event_counts SET events = events - ? WHERE tenant = ? AND type = ?",
        [(n, tenant, type) for type, n in gone.items()],
    )
    db.execute("DELETE FROM event_counts WHERE tenant = ? AND events <= 0", (tenant,))
    return deleted
