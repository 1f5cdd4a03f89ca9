"""The walks over sessions (``tree``, ``workflow``) and the text filter of a session's events (``matching``).

They live here, once, over the few indexed lookups an ``EventStore`` provides (``children``,
``trace``, ``events``), so every backend answers the same way. Both walks visit each session once,
so a session naming itself or a loop as its parent ends the walk, and both stop at
``MAX_TREE_SESSIONS`` (and say so).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from afteraction.store import events as contract  # the caps are read from the contract at each walk
from afteraction.store.events import EventStore, Session, SessionReader, StoredEvent, Tree

__all__ = ["matching", "tree", "workflow"]


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
    for _depth in range(contract.MAX_TREE_DEPTH):
        room = contract.MAX_TREE_SESSIONS - len(visited)
        found = reader.children(level, limit=room + 1) if room > 0 else []
        level = []
        for child in found:
            if child.id in visited:
                continue
            if len(visited) >= contract.MAX_TREE_SESSIONS:
                truncated = True
                break
            visited.add(child.id)
            assert child.parent_session_id is not None
            children.setdefault(child.parent_session_id, []).append(child)
            level.append(child.id)
        if not level:
            break
    else:  # deeper sessions, unless those below the last level are all on the path already (a loop)
        truncated = any(
            child.id not in visited for child in reader.children(level, limit=contract.MAX_TREE_SESSIONS + 1)
        )
    return _build(root, children), truncated


def workflow(store: EventStore, tenant: str, trace_id: str) -> tuple[list[Tree], bool] | None:
    """The sessions of a trace as a forest, and whether the cap cut it; None when the trace is
    unknown. Roots are the sessions whose parent is not in the trace; sessions left over (a
    loop of parents) hang from the earliest of them. Each session appears once."""
    with store.reading(tenant) as reader:
        found = reader.trace(trace_id, limit=contract.MAX_TREE_SESSIONS + 1)
    if not found:
        return None
    truncated = len(found) > contract.MAX_TREE_SESSIONS
    sessions = {session.id: session for session in found[: contract.MAX_TREE_SESSIONS]}
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
        and no deeper than ``contract.MAX_TREE_DEPTH``, as a session's tree."""
        nonlocal truncated
        placed.add(root.id)
        kids_of: dict[str, list[Session]] = {}
        stack, visit = [(root, 0)], []
        while stack:
            session, depth = stack.pop()
            kids = [child for child in children.get(session.id, ()) if child.id not in placed]
            if kids and depth >= contract.MAX_TREE_DEPTH:
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
