"""The EventStore contract: AEP events and the sessions they form, per tenant.

Rules every backend keeps (``tests/store/test_events_conformance.py`` checks each one on
SQLite and PostgreSQL):

- Events are keyed by (tenant, event id): the same id in two tenants is two events; the same id
  twice in one tenant is one event and a duplicate (also twice within one write).
- Events are ordered by their parsed instant (stored as integer microseconds since the epoch),
  then by arrival; never by the text of ``time``.
- Every new event updates its session's row in the same transaction: earliest and latest
  instant, number of events, parent (the first one given), and the source of its earliest
  event. Sessions, trees and workflows read those rows, never scan events.
- Every read and write is scoped to one tenant; a read never returns another tenant's row.
- A write of several requests' events is one transaction (group commit): when it returns,
  every event in it is committed.
- Deleting a session (``delete_sessions``, ``prune``) removes, in one transaction, its row, all
  its events and their share of the tenant's counts (what ``stats`` and ``/metrics`` read), so
  the figures stay those of what is stored; nothing of it is kept, not even its event ids: an
  event id deleted is new again, and stored again when it comes back. A child session stays (it
  is a session of its own) and names its parent still; walks simply no longer find the parent.
  A failed deletion leaves everything as it was.

The walks over sessions and the text filter are built once over the few indexed lookups a
backend provides (``children``, ``trace``, ``events``): ``store.session_walks``.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol, runtime_checkable

from afteraction.errors import ValidationError
from afteraction.model import Event
from afteraction.model._check import format_time
from afteraction.store.base import Store, check_ids
from afteraction.store.event_writes import (
    SessionRow,
    by_tenant,
    event_json,
    fresh,
    micros,
    session_rows,
    split,
    type_counts,
)

__all__ = [
    "MAX_TREE_DEPTH",
    "MAX_TREE_SESSIONS",
    "EventStore",
    "ReadsThroughReader",
    "Session",
    "SessionReader",
    "SessionRow",
    "Stats",
    "StoredEvent",
    "Tree",
    "by_tenant",
    "cutoff",
    "event_json",
    "fresh",
    "instant",
    "micros",
    "open_events",
    "session_ids",
    "session_rows",
    "split",
    "type_counts",
]

#: A walk stops descending below this depth and after this many sessions (and says so).
MAX_TREE_DEPTH = 64
MAX_TREE_SESSIONS = 10_000

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def instant(value: int) -> str:
    """A stored instant (microseconds) in the one textual form of stored times."""
    return format_time(_EPOCH + timedelta(microseconds=value))


def session_ids(ids: Sequence[str]) -> list[str]:
    """The distinct session ids of ``delete_sessions``, in order (``base.check_ids``)."""
    return check_ids(ids, "session")


def cutoff(before: datetime) -> int:
    """``prune``'s ``before`` as a stored instant (microseconds); ValidationError naming ``before``
    unless it is a datetime with a time zone (a naive one would mean a different instant per host)."""
    if not isinstance(before, datetime) or before.utcoffset() is None:
        raise ValidationError("before", f"must be a datetime with a time zone (UTC), got {before!r}")
    return micros(before)


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
            "started_at": instant(self.started_at),
            "ended_at": instant(self.ended_at),
            "events": self.events,
        }


@dataclass(frozen=True, slots=True)
class Tree:
    """A session and its descendants by ``parent_session_id``."""

    session: Session
    children: tuple[Tree, ...]

    def to_dict(self) -> dict[str, Any]:
        """The session's JSON with its ``children``, built bottom up (a deep tree costs no recursion)."""
        visit, stack = [], [self]
        while stack:
            tree = stack.pop()
            visit.append(tree)
            stack.extend(tree.children)
        done: dict[int, dict[str, Any]] = {}
        for tree in reversed(visit):
            done[id(tree)] = {**tree.session.to_dict(), "children": [done[id(child)] for child in tree.children]}
        return done[id(self)]


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as stored: its position (instant, arrival), its type and its JSON text as sent."""

    at: int
    pk: int
    type: str
    data: str

    @property
    def position(self) -> tuple[int, int]:
        return (self.at, self.pk)


@dataclass(frozen=True, slots=True)
class Stats:
    """What one tenant has stored: events by type, and sessions."""

    by_type: dict[str, int] = field(default_factory=dict)
    sessions: int = 0

    @property
    def events(self) -> int:
        return sum(self.by_type.values())


class SessionReader(Protocol):
    """One tenant's session lookups in one read (one transaction, or the SQLite lock): a walk
    over a tree or a workflow sees one state and costs one connection, not one per level."""

    def session(self, id: str) -> Session | None: ...

    def children(self, parents: Sequence[str], *, limit: int) -> list[Session]:
        """Sessions whose parent is one of ``parents`` (at most ``limit``), by start then id."""
        ...

    def trace(self, trace_id: str, *, limit: int) -> list[Session]:
        """The sessions of a trace (at most ``limit``), by start then id."""
        ...


class ReadsThroughReader:
    """``children`` and ``trace`` of an ``EventStore``, each answered by one ``reading`` of the
    tenant: the same for every backend, which only provides ``reading``."""

    def reading(self, tenant: str) -> AbstractContextManager[SessionReader]:
        raise NotImplementedError

    def children(self, tenant: str, parents: Sequence[str], *, limit: int) -> list[Session]:
        with self.reading(tenant) as reader:
            return reader.children(parents, limit=limit)

    def trace(self, tenant: str, trace_id: str, *, limit: int) -> list[Session]:
        with self.reading(tenant) as reader:
            return reader.trace(trace_id, limit=limit)


@runtime_checkable
class EventStore(Protocol):
    @property
    def store(self) -> Store:
        """The experience store in the same database (the server's Memory and API keys use it)."""
        ...

    def add_groups(self, groups: Sequence[tuple[str, Sequence[Event]]]) -> list[list[bool]]:
        """Store every group's events (a group is one tenant's) in one transaction; for each
        event, True when new and False when its tenant already had its id."""
        ...

    def add_many(self, tenant: str, events: Sequence[Event]) -> list[bool]:
        """``add_groups`` of one group."""
        ...

    def reading(self, tenant: str) -> AbstractContextManager[SessionReader]:
        """A ``SessionReader`` of ``tenant`` for the duration of the block."""
        ...

    def session(self, tenant: str, id: str) -> Session | None: ...

    def sessions(self, tenant: str, *, limit: int, before: tuple[int, str] | None = None) -> list[Session]:
        """Newest first (by earliest event, then id, descending); ``before`` is the
        (started_at, id) of the last session of the previous page."""
        ...

    def children(self, tenant: str, parents: Sequence[str], *, limit: int) -> list[Session]:
        """Sessions whose parent is one of ``parents`` (at most ``limit``), by start then id."""
        ...

    def trace(self, tenant: str, trace_id: str, *, limit: int) -> list[Session]:
        """The sessions of a trace (at most ``limit``), by start then id."""
        ...

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
        """Events in order of instant then arrival: of one session, or (``session_id`` None) of
        the tenant within [``start``, ``end``) microseconds; only of ``types`` when given;
        after the position ``after``."""
        ...

    def stats(self, tenant: str) -> Stats: ...

    def delete_sessions(self, tenant: str, ids: Sequence[str]) -> int:
        """Delete the tenant's sessions with these ids, with all their events (see the module's
        rules); how many sessions went. Unknown ids are skipped: deleting twice deletes nothing."""
        ...

    def prune(self, tenant: str | None, before: datetime) -> int:
        """Delete every session of ``tenant`` (of every tenant when None) whose last event is
        before ``before``, as ``delete_sessions`` does, in one transaction; how many went."""
        ...

    def close(self) -> None: ...


def open_events(url: str, *, checkpoint_every: float | None = None) -> EventStore:
    """The event store a database URL names: an SQLite file, or a PostgreSQL database shared by
    every replica (the ``postgres`` extra). ConfigError for anything else. ``checkpoint_every``
    (seconds) moves SQLite's WAL checkpoints to a thread of their own (what the server does)."""
    from afteraction.errors import ConfigError
    from afteraction.store import locate, require_postgres

    backend, target = locate(url)
    if backend == "memory":
        raise ConfigError(f"--db {url!r}: events need a database that outlives the process; give a file path")
    if backend == "sqlite":
        from afteraction.store.sqlite import SQLiteStore
        from afteraction.store.sqlite_events import SQLiteEvents

        return SQLiteEvents(SQLiteStore(target), checkpoint_every=checkpoint_every)
    require_postgres(url)
    from afteraction.store.postgres import PostgresStore
    from afteraction.store.postgres_events import PostgresEvents

    return PostgresEvents(PostgresStore(target))
