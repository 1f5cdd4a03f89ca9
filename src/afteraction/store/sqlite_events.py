"""SQLiteEvents: AEP events and the sessions they form, in the same SQLite file as the lessons.

It shares the ``SQLiteStore``'s one connection and lock, so one process has one writer. Events
are keyed by (tenant, id): the same id in two tenants is two events, the same id twice in one
tenant is one event and a duplicate. Each new event also updates its session's row (earliest and
latest instant, count, parent, the source of its earliest event), which the sessions list and the
trees read. Instants are stored as integer microseconds, so events sort by their parsed time,
never by the text of ``time``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from afteraction.model import Event
from afteraction.model._check import format_time
from afteraction.store.sqlite import SQLiteStore, micros

__all__ = ["MAX_TREE_DEPTH", "MAX_TREE_SESSIONS", "SQLiteEvents", "Session", "Tree"]

#: A tree stops descending below this depth and after this many sessions (and says so).
MAX_TREE_DEPTH = 64
MAX_TREE_SESSIONS = 10_000

_INSERT_EVENT = (
    "INSERT INTO events (tenant, id, session_id, trace_id, parent_session_id, type, at, data) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, id) DO NOTHING"
)
# In an UPDATE every expression reads the row as it was, so ``source`` compares the old start.
_UPSERT_SESSION = """
    INSERT INTO sessions (tenant, id, trace_id, parent_session_id, source, started_at, ended_at, events)
    VALUES (?, ?, ?, ?, ?, ?, ?, 1)
    ON CONFLICT (tenant, id) DO UPDATE SET
        source = CASE WHEN excluded.started_at < started_at THEN excluded.source ELSE source END,
        started_at = min(started_at, excluded.started_at),
        ended_at = max(ended_at, excluded.ended_at),
        events = events + 1,
        parent_session_id = coalesce(parent_session_id, excluded.parent_session_id)
"""
_SESSION_COLUMNS = "id, trace_id, parent_session_id, source, started_at, ended_at, events"
_CHILDREN = (
    f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE tenant = ? AND parent_session_id = ? ORDER BY started_at, id"
)


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _time(value: int) -> str:
    """A stored instant (microseconds) in the one textual form of stored times."""
    return format_time(_EPOCH + timedelta(microseconds=value))


@dataclass(frozen=True, slots=True)
class Session:
    """One session as its events describe it."""

    id: str
    trace_id: str
    parent_session_id: str | None
    source: str
    started_at: int
    ended_at: int
    events: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.id,
            "trace_id": self.trace_id,
            "parent_session_id": self.parent_session_id,
            "source": self.source,
            "started_at": _time(self.started_at),
            "ended_at": _time(self.ended_at),
            "events": self.events,
        }


@dataclass(frozen=True, slots=True)
class Tree:
    """A session and its descendants by ``parent_session_id``. Each session appears once: a
    session naming itself or a loop as its parent is not visited twice. ``truncated`` says the
    depth or size cap stopped the walk."""

    session: Session
    children: tuple[Tree, ...]

    def to_dict(self) -> dict[str, Any]:
        return {**self.session.to_dict(), "children": [child.to_dict() for child in self.children]}


def _parent(event: Event) -> str | None:
    return event.parent_session_id or None  # the SDKs send "" for a root session


class SQLiteEvents:
    """The event store over an open ``SQLiteStore`` (which owns the connection and closes it)."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store

    def add_many(self, tenant: str, events: Sequence[Event]) -> list[bool]:
        """Store the events in one transaction; for each, True when new, False when its id was
        already stored for this tenant (earlier, or earlier in the same batch)."""
        added: list[bool] = []
        with self.store._writing() as db:
            for event in events:
                added.append(self._add(db, tenant, event))
        return added

    def _add(self, db: sqlite3.Connection, tenant: str, event: Event) -> bool:
        at = micros(event.instant)
        parent = _parent(event)
        data = json.dumps(event.to_dict(), ensure_ascii=False, separators=(",", ":"))
        values = (tenant, event.id, event.session_id, event.trace_id, parent, event.type, at, data)
        if db.execute(_INSERT_EVENT, values).rowcount != 1:
            return False
        db.execute(_UPSERT_SESSION, (tenant, event.session_id, event.trace_id, parent, event.source, at, at))
        return True

    def sessions(self, tenant: str, *, limit: int, before: tuple[int, str] | None = None) -> list[Session]:
        """Sessions newest first (by their earliest event, then id, descending); ``before`` is
        the (started_at, id) of the last session of the previous page."""
        sql = f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE tenant = ?"
        params: list[Any] = [tenant]
        if before is not None:
            sql += " AND (started_at, id) < (?, ?)"
            params.extend(before)
        sql += " ORDER BY started_at DESC, id DESC LIMIT ?"
        with self.store._reading() as db:
            rows = db.execute(sql, (*params, limit)).fetchall()
        return [Session(*found) for found in rows]

    def session(self, tenant: str, id: str) -> Session | None:
        with self.store._reading() as db:
            found = db.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE tenant = ? AND id = ?", (tenant, id))
            values = found.fetchone()
        return None if values is None else Session(*values)

    def events(
        self, tenant: str, session_id: str, *, limit: int, after: tuple[int, int] | None = None
    ) -> list[tuple[tuple[int, int], dict[str, Any]]]:
        """A session's events in order of their parsed instant (then arrival), each with its
        position for the next page's ``after``."""
        sql = "SELECT at, pk, data FROM events WHERE tenant = ? AND session_id = ?"
        params: list[Any] = [tenant, session_id]
        if after is not None:
            sql += " AND (at, pk) > (?, ?)"
            params.extend(after)
        sql += " ORDER BY at, pk LIMIT ?"
        with self.store._reading() as db:
            rows = db.execute(sql, (*params, limit)).fetchall()
        return [((at, pk), json.loads(data)) for at, pk, data in rows]

    def tree(self, tenant: str, id: str) -> tuple[Tree, bool] | None:
        """The session ``id`` and its descendants, and whether a cap cut the walk; None when the
        session is unknown. Breadth first with a visited set, so a cycle ends the walk."""
        with self.store._reading() as db:
            found = db.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE tenant = ? AND id = ?", (tenant, id))
            values = found.fetchone()
            if values is None:
                return None
            root = Session(*values)
            visited = {root.id}
            children: dict[str, list[Session]] = {}
            level = [root]
            truncated = False
            for _depth in range(MAX_TREE_DEPTH):
                following: list[Session] = []
                for parent in level:
                    for row in db.execute(_CHILDREN, (tenant, parent.id)).fetchall():
                        child = Session(*row)
                        if child.id in visited:
                            continue
                        if len(visited) >= MAX_TREE_SESSIONS:
                            truncated = True
                            break
                        visited.add(child.id)
                        children.setdefault(parent.id, []).append(child)
                        following.append(child)
                level = following
                if not level:
                    break
            else:
                truncated = bool(level)

        def build(session: Session) -> Tree:
            return Tree(session, tuple(build(child) for child in children.get(session.id, ())))

        return build(root), truncated
