"""The run of an ingested session, as ``POST /sessions/{id}/verdict`` judges it.

The run is assembled from the session's stored events (``core.assemble``). A session that called no
tool itself (a workflow or an orchestrator whose agents did the work, as the OTLP instrumentations
record them) is given the tool calls of the sessions below it, breadth first, ``BELOW_SESSIONS`` at
most, so that its lesson holds the steps the verdict judged.
"""

from __future__ import annotations

from dataclasses import replace
from json import loads

from afteraction.core.assemble import assemble
from afteraction.errors import NotFoundError
from afteraction.model import Event, Run, Scope
from afteraction.server.common import Service

__all__ = ["BELOW_SESSIONS", "session_run"]


def session_run(service: Service, tenant: str, session_id: str, scope: Scope) -> Run:
    """The run of session ``session_id``; when it called no tool itself (a workflow or an orchestrator
    whose agents did the work, as OTLP instrumentations record them), with the tool calls of the
    sessions below it, so that its lesson holds the steps that verdict judged."""
    session = service.events.session(tenant, session_id)
    if session is None:
        raise NotFoundError(f"no session {session_id!r}")
    events = _session_events(service, tenant, session_id)
    run = _run_of(events, session_id, scope)
    if not run.calls and (below := _calls_below(service, tenant, session_id)):
        run = _run_of([*events, *below], session_id, scope)
    return run


def _run_of(events: list[Event], session_id: str, scope: Scope) -> Run:
    for run in assemble(events, scope):
        if run.session_id == session_id or run.id == session_id:
            return run
    raise NotFoundError(f"session {session_id!r} holds no task.created event, so no run to judge")


def _session_events(service: Service, tenant: str, session_id: str) -> list[Event]:
    events: list[Event] = []
    after = None
    while True:
        page = service.events.events(tenant, session_id, limit=1000, after=after)
        events.extend(Event.from_dict(loads(stored.data)) for stored in page)
        if len(page) < 1000:
            return events
        after = page[-1].position


BELOW_SESSIONS = 64  # sessions below a judged one whose tool calls join its run, at most
_CALL_EVENTS = frozenset({"tool.called", "tool.result", "error.raised"})


def _calls_below(service: Service, tenant: str, session_id: str) -> list[Event]:
    """The tool events of the sessions below ``session_id`` (breadth first, ``BELOW_SESSIONS`` at most),
    as events of ``session_id``."""
    found: list[Event] = []
    level, seen = [session_id], {session_id}
    while level and len(seen) <= BELOW_SESSIONS:
        children = [c for c in service.events.children(tenant, level, limit=BELOW_SESSIONS) if c.id not in seen]
        children = children[: BELOW_SESSIONS + 1 - len(seen)]
        seen.update(child.id for child in children)
        for child in children:
            for event in _session_events(service, tenant, child.id):
                if event.type in _CALL_EVENTS:
                    found.append(replace(event, session_id=session_id))
        level = [child.id for child in children]
    return found
