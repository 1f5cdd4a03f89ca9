"""The run of an ingested session, as ``POST /sessions/{id}/verdict`` judges it.

The run is assembled from the session's stored events (``core.assemble``). A session that called no
tool itself (a workflow or an orchestrator whose agents did the work, as the OTLP instrumentations
record them) is given the tool calls of the sessions below it, breadth first, ``BELOW_SESSIONS`` at
most, so that its lesson holds the steps the verdict judged.

What a verdict reads is bounded whatever the size of the session (a lesson keeps at most
``Limits.max_attempts`` attempts of ``Limits.max_calls`` calls anyway): the session's first
``RUN_EVENTS`` events in order (instant, then arrival), and, when it holds more, its ``task.created``,
``task.completed``, ``task.failed`` and ``error.raised`` events after them, ``TAIL_EVENTS`` at most,
so that the run still has its task, its end and its errors. Its other events past the first
``RUN_EVENTS`` (tool calls and their results, attempt changes) are not read; a run whose end lies past
both bounds reads as still running. The sessions below share one budget of ``RUN_EVENTS`` tool events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from json import loads

from afteraction.core.assemble import assemble
from afteraction.errors import NotFoundError
from afteraction.model import Event, Run, Scope
from afteraction.server.common import Service
from afteraction.store.events import StoredEvent

__all__ = ["BELOW_SESSIONS", "RUN_EVENTS", "TAIL_EVENTS", "session_run"]

RUN_EVENTS = 10_000  # the first events of a session a verdict reads, at most; also the budget of those below
TAIL_EVENTS = 1_000  # then, of a longer session, its task, end and error events, at most
_TAIL_TYPES = ("task.created", "task.completed", "task.failed", "error.raised")
_PAGE = 1000


def session_run(service: Service, tenant: str, session_id: str, scope: Scope) -> Run:
    """The run of session ``session_id``; when it called no tool itself (a workflow or an orchestrator
    whose agents did the work, as OTLP instrumentations record them), with the tool calls of the
    sessions below it, so that its lesson holds the steps that verdict judged."""
    session = service.events.session(tenant, session_id)
    if session is None:
        raise NotFoundError(f"no session {session_id!r}")
    events, last = _read(service, tenant, session_id, RUN_EVENTS)
    if last is not None:  # more than RUN_EVENTS: what the run needs from the rest
        events += _read(service, tenant, session_id, TAIL_EVENTS, types=_TAIL_TYPES, after=last)[0]
    run = _run_of(events, session_id, scope)
    if not run.calls and (below := _calls_below(service, tenant, session_id)):
        run = _run_of([*events, *below], session_id, scope)
    return run


def _run_of(events: list[Event], session_id: str, scope: Scope) -> Run:
    for run in assemble(events, scope):
        if run.session_id == session_id or run.id == session_id:
            return run
    raise NotFoundError(f"session {session_id!r} holds no task.created event, so no run to judge")


def _read(
    service: Service,
    tenant: str,
    session_id: str,
    limit: int,
    *,
    types: Sequence[str] = (),
    after: tuple[int, int] | None = None,
) -> tuple[list[Event], tuple[int, int] | None]:
    """The session's first ``limit`` events (of ``types`` when given) after ``after``, in order; and,
    when it holds more, the position of the last one read (else None)."""
    rows: list[StoredEvent] = []
    while len(rows) <= limit:  # one more than the limit tells whether more are there
        want = min(_PAGE, limit + 1 - len(rows))
        page = service.events.events(tenant, session_id, limit=want, after=after, types=types)
        rows += page
        if len(page) < want:
            break
        after = page[-1].position
    events = [Event.from_dict(loads(stored.data)) for stored in rows[:limit]]
    return events, rows[limit - 1].position if len(rows) > limit else None


BELOW_SESSIONS = 64  # sessions below a judged one whose tool calls join its run, at most
_CALL_EVENTS = ("tool.called", "tool.result", "error.raised")


def _calls_below(service: Service, tenant: str, session_id: str) -> list[Event]:
    """The tool events of the sessions below ``session_id`` (breadth first, ``BELOW_SESSIONS`` at most,
    ``RUN_EVENTS`` events in all), as events of ``session_id``."""
    found: list[Event] = []
    level, seen = [session_id], {session_id}
    while level and len(seen) <= BELOW_SESSIONS:
        children = [c for c in service.events.children(tenant, level, limit=BELOW_SESSIONS) if c.id not in seen]
        children = children[: BELOW_SESSIONS + 1 - len(seen)]
        seen.update(child.id for child in children)
        for child in children:
            if len(found) >= RUN_EVENTS:
                return found
            events = _read(service, tenant, child.id, RUN_EVENTS - len(found), types=_CALL_EVENTS)[0]
            found += (replace(event, session_id=session_id) for event in events)
        level = [child.id for child in children]
    return found
