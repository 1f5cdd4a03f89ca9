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

The walks over sessions (``tree``, ``workflow``) and the text filter live here, once, over the
few indexed lookups a backend provides (``children``, ``trace``, ``events``), so both backends
answer the same way. Both walks visit each session once, so a session naming itself or a loop
as its parent ends the walk, and both stop at ``MAX_TREE_SESSIONS`` (and say so).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol, runtime_checkable

from afteraction.model import Event
from afteraction.model._check import format_time
from afteraction.store.base import Store
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
    "event_json",
    "fresh",
    "instant",
    "matching",
    "micros",
    "open_events",
    "session_rows",
    "split",
    "tree",
    "type_counts",
    "workflow",
]

#: A walk stops descending below this depth and after this many sessions (and says so).
MAX_TREE_DEPTH = 64
MAX_TREE_SESSIONS = 10_000

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def instant(value: int) -> str:
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


def tree(store: EventStore, tenant: str, id: str) -> tuple[Tree, bool] | None:
    """The session ``id`` and its descendants, and whether a cap cut the walk; None when the
    session is unknown. Breadth first, one indexed lookup per level, each session once."""
    with store.reading(tenant) as reader:
        return _walk(reader, id)


def _walk(reader: SessionReader, id: str) -> tuple[Tree, bool] | None:
    root = reader.session(id)
    if root is None:
        return None
    visited = {root.id}
    children: dict[str, list[Session]] = {}
    level = [root.id]
    truncated = False
    for _depth in range(MAX_TREE_DEPTH):
        room = MAX_TREE_SESSIONS - len(visited)
        found = reader.children(level, limit=room + 1) if room > 0 else []
        level = []
        for child in found:
            if child.id in visited:
                continue
            if len(visited) >= MAX_TREE_SESSIONS:
                truncated = True
                break
            visited.add(child.id)
            assert child.parent_session_id is not None
            children.setdefault(child.parent_session_id, []).append(child)
            level.append(child.id)
        if not level:
            break
    else:  # deeper sessions, unless those below the last level are all on the path already (a loop)
        truncated = any(child.id not in visited for child in reader.children(level, limit=MAX_TREE_SESSIONS + 1))
    return _build(root, children), truncated


def workflow(store: EventStore, tenant: str, trace_id: str) -> tuple[list[Tree], bool] | None:
    """The sessions of a trace as a forest, and whether the cap cut it; None when the trace is
    unknown. Roots are the sessions whose parent is not in the trace; sessions left over (a
    loop of parents) hang from the earliest of them. Each session appears once."""
    with store.reading(tenant) as reader:
        found = reader.trace(trace_id, limit=MAX_TREE_SESSIONS + 1)
    if not found:
        return None
    truncated = len(found) > MAX_TREE_SESSIONS
    sessions = {session.id: session for session in found[:MAX_TREE_SESSIONS]}
    children: dict[str, list[Session]] = {}
    for session in sessions.values():  # already by start then id
        parent = session.parent_session_id
        if parent is not None and parent in sessions and parent != session.id:
            children.setdefault(parent, []).append(session)
    placed: set[str] = set()
    roots: list[Tree] = []
    order = {id: n for n, id in enumerate(sessions)}

    def place(root: Session) -> Tree:
        """``root``'s tree, depth first, each session once; iterative (a chain of parents may be 10,000 long),
        and no deeper than ``MAX_TREE_DEPTH``, as a session's tree."""
        nonlocal truncated
        placed.add(root.id)
        kids_of: dict[str, list[Session]] = {}
        stack, visit = [(root, 0)], []
        while stack:
            session, depth = stack.pop()
            kids = [child for child in children.get(session.id, ()) if child.id not in placed]
            if kids and depth >= MAX_TREE_DEPTH:
                truncated, kids = True, []
            placed.update(child.id for child in kids)
            kids_of[session.id] = kids
            visit.append(session)
            stack.extend((child, depth + 1) for child in reversed(kids))
        built: dict[str, Tree] = {}
        for session in reversed(visit):
            built[session.id] = Tree(session, tuple(built[child.id] for child in kids_of[session.id]))
        return built[root.id]

    for session in sessions.values():
        parent = session.parent_session_id
        if session.id not in placed and (parent is None or parent not in sessions or parent == session.id):
            roots.append(place(session))
    for session in sessions.values():  # what is left hangs from a loop of parents, or was cut below the depth
        if session.id in placed:
            continue
        walked, loop = _parents(session, sessions, placed)
        if loop:
            roots.append(place(sessions[min(loop, key=order.__getitem__)]))  # the loop's earliest member roots it
        else:
            placed.update(walked)  # below the depth cut: not shown (``truncated`` says so), and not walked again
    return roots, truncated


def _parents(session: Session, sessions: dict[str, Session], placed: set[str]) -> tuple[list[str], list[str]]:
    """The sessions walked up from ``session`` until a placed one or a repeat, and the loop found (else [])."""
    seen: dict[str, None] = {}
    current = session.id
    while current not in placed and current not in seen:
        seen[current] = None
        parent = sessions[current].parent_session_id
        assert parent is not None and parent in sessions  # else it would be a root, placed already
        current = parent
    walked = list(seen)
    return walked, (walked[walked.index(current) :] if current in seen else [])


def _build(root: Session, children: dict[str, list[Session]]) -> Tree:
    return Tree(root, tuple(_build(child, children) for child in children.get(root.id, ())))


def _holds(value: Any, needle: str) -> bool:
    """Whether a string or number anywhere in ``value`` holds ``needle`` (field names do not count)."""
    if isinstance(value, str):
        return needle in value.casefold()
    if isinstance(value, dict):
        return any(_holds(item, needle) for item in value.values())
    if isinstance(value, list):
        return any(_holds(item, needle) for item in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool) and needle in str(value)


def matching(
    store: EventStore,
    tenant: str,
    session_id: str,
    *,
    limit: int,
    after: tuple[int, int] | None,
    types: Sequence[str],
    text: str,
) -> Iterator[StoredEvent]:
    """Up to ``limit`` events of a session with a string or number that holds ``text``
    (case-folded; field names do not count), in order, reading the session page by page."""
    needle = text.casefold()
    given = 0
    while given < limit:
        page = store.events(tenant, session_id, limit=500, after=after, types=types)
        for found in page:
            if _holds(json.loads(found.data), needle):
                yield found
                given += 1
                if given == limit:
                    return
        if len(page) < 500:
            return
        after = page[-1].position
