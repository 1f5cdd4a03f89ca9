"""Spans grouped into sessions: one per agent (or workflow) invocation, holding the tool calls, model
calls and handoffs that happened inside it, linked to the session it ran in.

- A span belongs to the session of its nearest ancestor that is an invocation; spans the mapping
  skips (LangGraph tasks, OpenInference chains, ``turn`` spans…) are walked through.
- An ``invoke_agent`` directly inside an invocation of the same agent is the same invocation recorded by
  two layers (OpenLLMetry's ``X.workflow`` under ``invoke_agent X``): it is merged into it.
- Tool calls with no invocation above them (an instrumentation that records none) form an implicit
  session at their trace's root span. Model calls alone do not make a run.
- Tool calls whose ancestry leaves the request (the exporter sent their parents in another export, as a
  batching exporter does with a long run) are *detached*: their events go to the session of the missing
  parent, with no ``task.created`` of their own. When that parent is the agent span, its own export
  later opens the session and they join its run; otherwise they are kept but belong to no run.
- A session fails when one of its own spans failed, or when a child session failed and nothing happened
  in the session after that child ended (the failure ended the run; a later step means it recovered).

Parent links are cycle-safe: a span that names itself (or a descendant) as its parent ends the walk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from afteraction.core.otlp_classify import Role, agent_name, classify
from afteraction.core.otlp_spans import Span
from afteraction.core.otlp_values import error_of

__all__ = ["Item", "Session", "sessions"]

_Key = tuple[str, str]  # (trace id, span id)


@dataclass(frozen=True, slots=True)
class Item:
    """A tool call, model call or handoff inside a session."""

    role: Role
    span: Span


@dataclass(eq=False)
class Session:
    span: Span
    kind: Role  # "agent" or "workflow"
    name: str
    merged: list[Span] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    parent: Session | None = None
    children: list[Session] = field(default_factory=list)
    error: tuple[str | None, str] | None = None
    detached: str | None = None  # the span id of the missing parent these items ran under

    @property
    def id(self) -> str:
        return f"{self.span.trace_id}-{self.detached or self.span.span_id}"


def _order(span: Span) -> tuple[int, int, str]:
    return (span.start_ns, -span.end_ns, span.span_id)


def sessions(spans: Sequence[Span]) -> list[Session]:
    """The sessions the spans describe, in start order (see the module docstring)."""
    ordered = sorted(spans, key=_order)
    by_key: dict[_Key, Span] = {(s.trace_id, s.span_id): s for s in ordered}
    roles = {(s.trace_id, s.span_id): classify(s) for s in ordered}

    def ancestors(span: Span) -> list[Span]:
        """Parents upward, while known and not seen before (so a cycle ends the walk)."""
        found: list[Span] = []
        seen = {span.span_id}
        current = span
        while current.parent_id is not None and current.parent_id not in seen:
            parent = by_key.get((current.trace_id, current.parent_id))
            if parent is None:
                break
            found.append(parent)
            seen.add(parent.span_id)
            current = parent
        return found

    owner: dict[_Key, Session] = {}  # invocation span → its session (merged spans too)
    made: list[Session] = []
    for span in ordered:
        key = (span.trace_id, span.span_id)
        role = roles[key]
        if role not in ("agent", "workflow"):
            continue
        above = next((owner[k] for a in ancestors(span) if (k := (a.trace_id, a.span_id)) in owner), None)
        name = agent_name(span)
        if above is not None and role == "agent" and above.kind == "agent" and above.name == name:
            above.merged.append(span)
            owner[key] = above
            continue
        session = Session(span, role, name)
        if above is not None and not _is_ancestor(session, above):
            session.parent = above
            above.children.append(session)
        owner[key] = session
        made.append(session)

    implicit: dict[_Key, Session] = {}
    orphans: list[tuple[Span, Role, _Key, Span]] = []
    for span in ordered:
        role = roles[(span.trace_id, span.span_id)]
        if role not in ("tool", "model", "handoff"):
            continue
        chain = ancestors(span)
        home = next((owner[k] for a in chain if (k := (a.trace_id, a.span_id)) in owner), None)
        if home is not None:
            home.items.append(Item(role, span))
        else:
            top = chain[-1] if chain else span
            # a root span, or the parent this request does not hold (sent in another export)
            orphans.append((span, role, (top.trace_id, top.parent_id or top.span_id), top))
    with_tools = {key for _, role, key, _ in orphans if role == "tool"}
    for span, role, key, top in orphans:
        if key in with_tools:
            if key not in implicit:
                implicit[key] = Session(top, "agent", agent_name(top), detached=top.parent_id)
            implicit[key].items.append(Item(role, span))
    made.extend(implicit.values())
    made.sort(key=lambda s: _order(s.span))
    for session in made:
        _settle(session, set())
    return made


def _is_ancestor(session: Session, candidate: Session) -> bool:
    """Whether ``session`` already sits above ``candidate`` (linking them would make a cycle)."""
    current: Session | None = candidate
    seen: set[int] = set()
    while current is not None and id(current) not in seen:
        if current is session:
            return True
        seen.add(id(current))
        current = current.parent
    return False


def _settle(session: Session, visiting: set[int]) -> tuple[str | None, str] | None:
    """The session's error: its own spans' first, else a child's that ended the session."""
    if session.error is not None or id(session) in visiting:
        return session.error
    visiting.add(id(session))
    for span in (session.span, *session.merged):
        if (found := error_of(span)) is not None:
            session.error = found
            return found
    steps = [item.span.start_ns for item in session.items] + [child.span.start_ns for child in session.children]
    for child in session.children:
        error = _settle(child, visiting)
        if error is not None and not any(start >= child.span.end_ns for start in steps):
            session.error = error
    return session.error
