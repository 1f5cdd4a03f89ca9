"""map_spans with ``placed``: spans whose parent was stored as a session in an earlier export (a late or retried
batch, or a trace sent root first) join that session as the trace sent whole would put them: model calls and
handoffs too (they were dropped: "model calls alone make no run"), a sub-agent keeps its parent session, and an
``X.workflow`` span under ``invoke_agent X`` with only skipped spans between is merged into it (it opened a
parentless session of its own)."""

from __future__ import annotations

from afteraction.core.otlp_events import map_spans
from afteraction.core.otlp_sessions import Placed
from tests.core.test_otlp_events import TRACE, span

AGENT = (TRACE, f"{1:016x}")  # the stored session's span
SESSION = f"{TRACE}-{1:016x}"
STORED = {AGENT: Placed("agent://bot", None, kind="agent", role="standalone")}
MODEL = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}


def test_a_late_model_call_and_its_error_join_the_stored_session() -> None:
    found = map_spans([span(2, "chat m", 1, 10, 20, 2, **MODEL, **{"error.type": "Boom"})], placed=STORED).events
    assert [(e.type, e.session_id, e.source, e.agent_role) for e in found] == [
        ("task.updated", SESSION, "agent://bot", "standalone"),
        ("error.raised", SESSION, "agent://bot", "standalone"),
    ]
    assert map_spans([span(2, "chat m", 1, 10, 20, **MODEL)]).events == ()  # not stored: no run, as before


def test_a_late_handoff_joins_the_stored_session() -> None:
    handoff = span(2, "handoff", 1, 10, 20, **{"gen_ai.operation.name": "handoff", "to_agent": "other"})
    found = map_spans([handoff], placed=STORED).events
    assert [(e.type, e.session_id, e.payload.get("from_agent")) for e in found] == [
        ("handoff.started", SESSION, "bot"),
        ("handoff.completed", SESSION, "bot"),
    ]


def test_a_late_sub_agent_is_a_child_of_the_stored_session_which_becomes_an_orchestrator() -> None:
    sub = span(3, "invoke_agent helper", 2, 10, 40, **{"gen_ai.operation.name": "invoke_agent"})
    step = span(2, "step", 1, 5, 50)  # skipped, walked through
    tool = span(4, "execute_tool t", 3, 20, 30, **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"})
    found = map_spans([tool, sub, step], placed=STORED).events
    assert {(e.session_id, e.parent_session_id, e.agent_role) for e in found} == {
        (f"{TRACE}-{3:016x}", SESSION, "subagent")
    }
    other = span(5, "chat m", 1, 60, 70, **MODEL)
    joined = map_spans([sub, step, other], placed=STORED).events
    assert {e.agent_role for e in joined if e.session_id == SESSION} == {"orchestrator"}


def test_the_workflow_span_of_the_stored_agent_is_merged_into_it_through_skipped_spans_only() -> None:
    workflow = {"traceloop.span.kind": "workflow", "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot"}
    task = span(2, "agent.task", 1, 5, 90)  # a LangGraph task span: skipped
    inner = span(3, "bot.workflow", 2, 10, 80, **workflow)
    tool = span(4, "execute_tool t", 3, 20, 30, **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"})
    found = map_spans([task, inner, tool], placed=STORED).events
    assert [(e.type, e.session_id) for e in found] == [("tool.called", SESSION), ("tool.result", SESSION)]
    workflow_stored = {AGENT: Placed("agent://bot", None, kind="workflow", role="standalone")}
    apart = map_spans([task, inner, tool], placed=workflow_stored).events  # a workflow is not the agent: a child
    assert {(e.session_id, e.parent_session_id) for e in apart} == {(f"{TRACE}-{3:016x}", SESSION)}
    through_a_tool = span(2, "execute_tool x", 1, 5, 90, **{"gen_ai.operation.name": "execute_tool"})
    calls_itself = map_spans([through_a_tool, inner, tool], placed=STORED).events  # the agent calling itself
    assert {e.session_id for e in calls_itself if e.type == "task.created"} == {f"{TRACE}-{3:016x}"}
