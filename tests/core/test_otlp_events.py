"""map_spans on shapes the captures do not show: instrumentations without gen_ai.operation.name,
tool calls with no agent span above them, model calls alone, recovery after a failed sub-agent."""

from __future__ import annotations

import itertools
from typing import Any

from afteraction.core.assemble import assemble
from afteraction.core.otlp_events import map_spans, time_text
from afteraction.core.otlp_spans import STATUS_ERROR, STATUS_OK, Span, SpanEvent
from afteraction.model import Run, Scope

TRACE = "0af7651916cd43dd8448eb211c80319c"
SCOPE = Scope(tenant="t", app="a", project="p")


def span(sid: int, name: str, parent: int | None, start: int, end: int, status: int = 0, **attrs: Any) -> Span:
    return Span(
        trace_id=TRACE,
        span_id=f"{sid:016x}",
        parent_id=None if parent is None else f"{parent:016x}",
        name=name,
        kind=1,
        start_ns=1_795_964_213_000_000_000 + start * 1000,
        end_ns=1_795_964_213_000_000_000 + end * 1000,
        status=status,
        status_message="",
        attributes=attrs,
        events=(),
    )


def runs(*spans: Span) -> list[Run]:
    return assemble(map_spans(spans).events, SCOPE)


def test_openinference_kinds_without_operation_names_map_and_chains_are_walked_through() -> None:
    found = runs(
        span(1, "LangGraph", None, 0, 100, **{"openinference.span.kind": "CHAIN"}),
        span(2, "agent", 1, 1, 50, **{"openinference.span.kind": "AGENT", "input.value": "Find the weather"}),
        span(3, "tools", 2, 10, 20, **{"openinference.span.kind": "CHAIN"}),
        span(
            4,
            "lookup",
            3,
            11,
            19,
            **{"openinference.span.kind": "TOOL", "tool.name": "lookup", "input.value": '{"q": 1}'},
        ),
    )
    (run,) = found
    assert (run.agent, run.task, run.state) == ("agent", "Find the weather", "completed")
    assert [(c.tool, dict(c.args)) for c in run.calls] == [("lookup", {"q": 1})]


def test_tool_calls_with_no_agent_span_above_them_form_a_run_at_the_trace_root() -> None:
    (run,) = runs(
        span(1, "my pipeline", None, 0, 100),
        span(2, "execute_tool search", 1, 10, 20, **{"gen_ai.operation.name": "execute_tool"}),
    )
    assert run.agent == "my pipeline" and [c.tool for c in run.calls] == ["search"]


def test_model_calls_alone_make_no_run_and_unknown_spans_are_skipped() -> None:
    assert map_spans([span(1, "chat gpt", None, 0, 10, **{"gen_ai.operation.name": "chat"})]).events == ()
    assert map_spans([span(1, "embeddings", None, 0, 10, **{"gen_ai.operation.name": "embeddings"})]).events == ()
    assert map_spans([span(1, "GET /", None, 0, 10, **{"http.method": "GET"})]).events == ()


def test_an_agent_recorded_twice_by_two_layers_is_one_run() -> None:
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}
    (run,) = runs(
        span(1, "invoke_agent a", None, 0, 100, **agent),
        span(2, "a.workflow", 1, 1, 99, STATUS_ERROR, **agent),
        span(3, "execute_tool t", 2, 10, 20, **{"gen_ai.operation.name": "execute_tool"}),
    )
    assert run.state == "failed" and [c.tool for c in run.calls] == ["t"]


def test_a_failed_sub_agent_fails_its_parent_unless_the_parent_went_on() -> None:
    agent = {"gen_ai.operation.name": "invoke_agent"}
    failed = span(2, "invoke_agent child", 1, 10, 20, STATUS_ERROR, **agent)
    parent, child = runs(span(1, "invoke_agent parent", None, 0, 100, STATUS_OK, **agent), failed)
    assert (parent.state, child.state) == ("failed", "failed")
    later = span(3, "execute_tool retry", 1, 30, 40, **{"gen_ai.operation.name": "execute_tool"})
    parent, child = runs(span(1, "invoke_agent parent", None, 0, 100, **agent), failed, later)
    assert (parent.state, child.state) == ("completed", "failed")


def test_errors_read_error_type_then_the_exception_then_the_status_message() -> None:
    exception = SpanEvent("exception", 0, {"exception.type": "pkg.Boom", "exception.message": "it broke"})
    tool = span(2, "execute_tool t", 1, 10, 20, STATUS_ERROR, **{"gen_ai.operation.name": "execute_tool"})
    tool_with_event = Span(**{**{f: getattr(tool, f) for f in tool.__dataclass_fields__}, "events": (exception,)})
    (run,) = runs(span(1, "invoke_agent a", None, 0, 100, **{"gen_ai.operation.name": "invoke_agent"}), tool_with_event)
    assert run.calls[0].error == "pkg.Boom: it broke"
    assert run.state == "completed"  # the agent span did not fail: the run recovered


def test_event_ids_are_derived_from_trace_and_span_and_times_keep_nanoseconds() -> None:
    spans = [
        span(1, "invoke_agent a", None, 0, 100, **{"gen_ai.operation.name": "invoke_agent"}),
        span(2, "execute_tool t", 1, 10, 20, **{"gen_ai.operation.name": "execute_tool"}),
    ]
    first, again = map_spans(spans).events, map_spans(list(reversed(spans))).events
    assert [e.id for e in first] == [e.id for e in again]
    assert len({e.id for e in first}) == len(first) == 4
    assert all(e.id.startswith(f"otlp-{TRACE}-") for e in first)
    assert time_text(1_795_964_213_578_647_569) == "2026-11-29T14:56:53.578647569Z"
    assert time_text(0) == "1970-01-01T00:00:00.000000000Z"


def test_flattened_openinference_messages_give_the_task_and_the_call_ids() -> None:
    llm = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "Be brief.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": "Weather in Lisbon?",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"city": "Lisbon"}',
    }
    tool_message = '{"content": "Sunny", "type": "tool", "name": "get_weather", "tool_call_id": "call_1"}'
    tool = {"openinference.span.kind": "TOOL", "tool.name": "get_weather", "output.value": tool_message}
    (run,) = runs(
        span(1, "LangGraph", None, 0, 100, **{"openinference.span.kind": "CHAIN", "input.value": '{"messages": []}'}),
        span(2, "ChatOpenAI", 1, 1, 5, **llm),
        span(3, "get_weather", 1, 10, 20, **tool),
    )
    assert (run.agent, run.task) == ("LangGraph", "Weather in Lisbon?")
    assert [(c.tool, dict(c.args), c.call_id, c.result) for c in run.calls] == [
        ("get_weather", {"city": "Lisbon"}, "call_1", "Sunny")
    ]


def test_older_shapes_pydantic_ai_keys_and_openllmetry_prompts_are_read() -> None:
    agent = {
        "agent_name": "helper",
        "pydantic_ai.all_messages": '[{"role": "user", "parts": [{"type": "text", "content": "Add 1 and 2"}]}]',
    }
    model = {
        "gen_ai.request.model": "m",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "Add 1 and 2",
        "gen_ai.completion.0.tool_calls.0.name": "add",
        "gen_ai.completion.0.tool_calls.0.id": "c9",
    }
    tool = {"gen_ai.tool.name": "add", "tool_arguments": '{"a": 1, "b": 2}', "tool_response": "3"}
    (run,) = runs(
        span(1, "agent run", None, 0, 100, **agent),
        span(2, "chat m", 1, 1, 5, **model),
        span(3, "running tool", 1, 10, 20, **tool),
    )
    assert (run.agent, run.task) == ("helper", "Add 1 and 2")
    assert [(c.tool, dict(c.args), c.call_id, c.result) for c in run.calls] == [("add", {"a": 1, "b": 2}, "c9", "3")]


def test_ten_thousand_nested_invocations_map_without_recursion_or_quadratic_walks() -> None:
    """A chain of 10,000 spans (agent, chain, agent, … with a failing tool at the bottom)."""
    n = 10_000
    chain = [
        span(
            i + 1,
            f"invoke_agent a{i}" if i % 2 == 0 else "step",
            i or None,
            i,
            2 * n - i,
            **({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": f"a{i}"} if i % 2 == 0 else {}),
        )
        for i in range(n)
    ]
    tool = span(n + 1, "execute_tool t", n, n, n + 1, STATUS_ERROR, **{"gen_ai.operation.name": "execute_tool"})
    found = runs(*chain, tool)
    assert len(found) == n // 2
    assert found[-1].calls[0].error is not None and found[-1].state == "completed"
    assert all(run.parent_id == parent.id for parent, run in itertools.pairwise(found))


def test_a_request_holding_its_messages_and_gemini_text_parts_give_the_task() -> None:
    request = '{"model": "g", "contents": [{"role": "user", "parts": [{"text": "Book a table"}]}]}'
    model = {"gen_ai.request.model": "g", "gcp.vertex.agent.llm_request": request}
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "book",
        "gcp.vertex.agent.tool_call_args": '{"n": 2}',
    }
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "host"}
    (run,) = runs(
        span(1, "invoke_agent host", None, 0, 100, **agent),
        span(2, "call_llm", 1, 1, 5, **model),
        span(3, "execute_tool book", 1, 10, 20, **tool),
    )
    assert run.task == "Book a table" and dict(run.calls[0].args) == {"n": 2}


def test_an_agent_calling_itself_through_a_tool_is_two_runs() -> None:
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ask_a"}
    outer, inner = runs(
        span(1, "invoke_agent a", None, 0, 100, **agent),
        span(2, "execute_tool ask_a", 1, 10, 90, **tool),
        span(3, "invoke_agent a", 2, 11, 89, **agent),
    )
    assert [c.tool for c in outer.calls] == ["ask_a"] and inner.parent_id == outer.id


def test_a_model_calls_usage_keeps_only_what_its_conventions_allow() -> None:
    """Token counts were stored as sent ("abc", -7, 1.5, true), so a sum of them failed or lied."""
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}
    calls = []
    for n, (model, tokens_in, tokens_out) in enumerate(
        [("gpt-x", 57, "13"), (123, "abc", -7), ("gpt-y", 1.5, True), ("gpt-z", [3], "99999999999999999999")]
    ):
        usage = {"gen_ai.usage.input_tokens": tokens_in, "gen_ai.usage.output_tokens": tokens_out}
        attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model, **usage}
        calls.append(span(n + 2, "chat", 1, 10 + n, 11 + n, **attrs))
    events = map_spans([span(1, "invoke_agent a", None, 0, 100, **agent), *calls]).events
    found = [e.payload["model_call"] for e in events if "model_call" in e.payload]
    assert found == [
        {"operation": "chat", "model": "gpt-x", "input_tokens": 57, "output_tokens": 13},
        {"operation": "chat"},
        {"operation": "chat", "model": "gpt-y"},
        {"operation": "chat", "model": "gpt-z"},
    ]
