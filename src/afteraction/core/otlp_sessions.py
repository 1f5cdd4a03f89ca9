"""Spans grouped into sessions: one per agent (or workflow) invocation, holding the tool calls, model
calls and handoffs that happened inside it, linked to the session it ran in.

- A span belongs to the session of its nearest ancestor that is an invocation; spans the mapping
  skips (LangGraph tasks, OpenInference chains, ``turn`` spans…) are walked through.
- An ``invoke_agent`` inside an invocation of the same agent, with only skipped spans between, is the
  same invocation recorded by two layers (OpenLLMetry's ``X.workflow`` under ``invoke_agent X``): it is
  merged into it. Through a tool call it is the agent calling itself: a session of its own.
- Tool calls with no invocation above them (an instrumentation that records none) form an implicit
  session at their trace's root span. Model calls alone do not make a run.
- Tool calls whose ancestry leaves the spans given are *detached*: their events go to the session of the
  missing parent, with no ``task.created`` of their own. When that parent is the agent span, its own
  spans later open the session and they join its run; otherwise they belong to no run. The service
  gives this function a span only once its ancestry is known (``otlp_pending``), so this happens only
  to a trace resolved as it is (the span buffer's bounds passed).
- A span whose ancestry leaves the spans given at a session stored already (``placed``: a late or retried
  export, or the trace sent root first) belongs to that session, as if the trace had been sent whole: its
  tool calls, model calls and handoffs join it, an invocation inside it is its child (its parent session
  is the stored one), and an ``invoke_agent`` of the same agent with only skipped spans between is merged
  into it. The stored session's own events are not made again.
- A session fails when one of its own spans failed, or when a child session failed and nothing happened
  in the session after that child ended (the failure ended the run; a later step means it recovered).
- Its task is the last user message its spans were given, else its first model call's, else
  OpenInference's plain-text ``input.value``, else its first child's task (None: only its name is known).

Every walk is iterative and each span is visited once (a request of 10,000 nested spans neither recurses
nor goes quadratic); a span that names itself or a descendant as its parent ends the walk (cycle-safe).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from afteraction.core.otlp_classify import Role, agent_name, classify
from afteraction.core.otlp_messages import task_text
from afteraction.core.otlp_spans import Span
from afteraction.core.otlp_values import error_of, loads
from afteraction.model.event import AgentRole

__all__ = ["Item", "Placed", "Session", "sessions"]

_Key = tuple[str, str]  # (trace id, span id)
_INVOCATIONS = ("agent", "workflow")


@dataclass(frozen=True, slots=True)
class Item:
    """A tool call, model call or handoff inside a session."""

    role: Role
    span: Span


@dataclass(frozen=True, slots=True)
class Placed:
    """A session stored already that spans of a later export hang under, as its events describe it."""

    source: str  # "agent://<name>", or "otlp://detached" for a session of detached calls
    parent_id: str | None  # its parent session's id
    kind: Role | None = None  # "agent" or "workflow" (its ``task.created``); None when it has none
    role: AgentRole | None = None

    @property
    def name(self) -> str:
        return self.source.removeprefix("agent://")


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
    task: str | None = None
    detached: str | None = None  # the span id of the missing parent these items ran under
    placed: Placed | None = None  # when that parent is a stored session: what it is

    @property
    def id(self) -> str:
        return f"{self.span.trace_id}-{self.detached or self.span.span_id}"

    @property
    def parent_id(self) -> str | None:
        if self.placed is not None:
            return self.placed.parent_id
        return None if self.parent is None else self.parent.id


def _key(span: Span) -> _Key:
    return (span.trace_id, span.span_id)


def _order(span: Span) -> tuple[int, int, str]:
    return (span.start_ns, -span.end_ns, span.span_id)


class _Tree:
    """Per span: its nearest invocation ancestor, and the top of its ancestry in this request (the key
    of a root span, or of the missing parent above it), each found once and remembered."""

    def __init__(self, spans: Sequence[Span], roles: dict[_Key, Role | None]) -> None:
        self.by_key = {_key(s): s for s in spans}
        self.roles = roles
        self.near: dict[_Key, Span | None] = {}
        self.top: dict[_Key, tuple[_Key, Span, str | None]] = {}  # key, top span, its missing parent id
        for span in spans:
            self._walk(span)

    def _walk(self, span: Span) -> None:
        if _key(span) in self.near:
            return
        path = [span]
        on_path = {_key(span)}
        near: Span | None = None
        top: tuple[_Key, Span, str | None] | None = None
        while True:
            current = path[-1]
            parent = None if current.parent_id is None else self.by_key.get((current.trace_id, current.parent_id))
            if parent is None or _key(parent) in on_path:  # a root, a missing parent, or a cycle
                missing = current.parent_id if parent is None else None
                top = ((current.trace_id, missing or current.span_id), current, missing)
                break
            if _key(parent) in self.near:
                near = parent if self.roles[_key(parent)] in _INVOCATIONS else self.near[_key(parent)]
                top = self.top[_key(parent)]
                break
            path.append(parent)
            on_path.add(_key(parent))
        for item in reversed(path):
            self.near[_key(item)] = near
            self.top[_key(item)] = top
            if self.roles[_key(item)] in _INVOCATIONS:
                near = item

    def only_skipped_between(self, span: Span, ancestor: Span | None) -> bool:
        """Whether every span between ``span`` and its ancestor is one the mapping skips (so the two
        are one invocation seen by two layers, not an agent calling itself through a tool); with no
        ancestor, every span above ``span`` up to where its ancestry leaves the spans given."""
        current = span
        for _ in range(len(self.by_key)):
            parent = None if current.parent_id is None else self.by_key.get((current.trace_id, current.parent_id))
            if parent is None or parent is ancestor:
                return parent is not None if ancestor is not None else current.parent_id is not None
            if self.roles[_key(parent)] is not None:
                return False
            current = parent
        return False


def sessions(spans: Sequence[Span], placed: Mapping[_Key, Placed] | None = None) -> list[Session]:
    """The sessions the spans describe, in start order (see the module docstring); ``placed``: the
    stored sessions, by (trace id, span id), that spans whose ancestry leaves the spans given join."""
    ordered = sorted({_key(s): s for s in spans}.values(), key=_order)
    roles = {_key(s): classify(s) for s in ordered}
    tree = _Tree(ordered, roles)
    owner: dict[_Key, Session] = {}  # invocation span → its session (merged spans too)
    made: list[Session] = []  # parents before children
    joined: dict[_Key, Session] = {}  # a stored session (or a missing parent with tool calls) → what joins it
    stored = placed or {}

    def join(span: Span) -> Session | None:
        """The stored session the span's ancestry leaves the spans given at, if any."""
        key, top, missing = tree.top[_key(span)]
        if missing is None or key not in stored:
            return None
        if key not in joined:
            found = stored[key]
            # without a kind it is a session of detached calls, named "otlp://detached": nothing merges into it
            joined[key] = Session(top, found.kind or "agent", found.name, detached=missing, placed=found)
            made.append(joined[key])
        return joined[key]

    def open_session(span: Span) -> None:
        chain = [span]  # this invocation and the unopened invocations above it, opened top down
        while (above := tree.near[_key(chain[-1])]) is not None and _key(above) not in owner:
            chain.append(above)
        for current in reversed(chain):
            up = tree.near[_key(current)]
            parent = join(current) if up is None else owner[_key(up)]
            role, name = roles[_key(current)], agent_name(current)
            same = parent is not None and role == "agent" and parent.kind == "agent" and parent.name == name
            if parent is not None and same and tree.only_skipped_between(current, up):
                parent.merged.append(current)
                owner[_key(current)] = parent
                continue
            session = Session(current, "workflow" if role == "workflow" else "agent", name, parent=parent)
            if parent is not None:
                parent.children.append(session)
            owner[_key(current)] = session
            made.append(session)

    for span in ordered:
        if roles[_key(span)] in _INVOCATIONS and _key(span) not in owner:
            open_session(span)

    orphans: list[tuple[Span, Role, _Key, Span, str | None]] = []
    for span in ordered:
        role = roles[_key(span)]
        if role is None or role in _INVOCATIONS:
            continue
        near = tree.near[_key(span)]
        if near is not None:
            owner[_key(near)].items.append(Item(role, span))
        elif (under := join(span)) is not None:
            under.items.append(Item(role, span))
        else:
            key, top, missing = tree.top[_key(span)]
            orphans.append((span, role, key, top, missing))
    with_tools = {key for _, role, key, _, _ in orphans if role == "tool"}
    for span, role, key, top, missing in orphans:
        if key in with_tools:
            if key not in joined:
                joined[key] = Session(top, "agent", agent_name(top), detached=missing)
                made.append(joined[key])
            joined[key].items.append(Item(role, span))
    for session in reversed(made):  # children before parents
        _settle(session)
    return sorted(made, key=lambda s: _order(s.span))


def _settle(session: Session) -> None:
    """The session's error and task; its children are settled already."""
    spans = (session.span, *session.merged)
    session.error = next((found for span in spans if (found := error_of(span)) is not None), None)
    children = sorted(session.children, key=lambda s: _order(s.span))
    if session.error is None:
        steps = [item.span.start_ns for item in session.items] + [child.span.start_ns for child in children]
        last_step = max(steps, default=-1)
        failed = [child for child in children if child.error is not None and last_step < child.span.end_ns]
        session.error = failed[-1].error if failed else None
    text = next((t for span in spans if (t := task_text(span))), None)
    if text is None:
        text = next((t for item in session.items if item.role == "model" and (t := task_text(item.span))), None)
    if text is None:
        value = session.span.attributes.get("input.value")
        if isinstance(value, str) and value.strip() and not isinstance(loads(value), (dict, list)):
            text = value
    session.task = text if text is not None else next((c.task for c in children if c.task), None)
