"""Which spans can be mapped now and which wait for their ancestors, and the span serializer the
buffer keeps: what the mapping reads of a span and nothing else (a conversation is held as its task,
output and tool calls), so that every capture, and every shape below, maps held as it maps whole."""

from __future__ import annotations

import json
from typing import Any

import pytest

from afteraction.core.otlp_events import map_spans
from afteraction.core.otlp_pending import dumps, kept, loads, split
from afteraction.core.otlp_spans import STATUS_ERROR, Span, SpanEvent, decode_traces
from tests.core.test_otlp_conformance import REQUESTS, encodings, request_data

TRACE = "0af7651916cd43dd8448eb211c80319c"


def span(span_id: int, parent: int | None = None, *, trace: str = TRACE, remote: bool = False) -> Span:
    return Span(
        trace_id=trace,
        span_id=f"{span_id:016x}",
        parent_id=None if parent is None else f"{parent:016x}",
        name=f"s{span_id}",
        kind=1,
        start_ns=span_id,
        end_ns=span_id + 1,
        status=0,
        status_message="",
        attributes={},
        parent_remote=remote,
    )


def names(spans: tuple[Span, ...]) -> list[str]:
    return sorted(s.name for s in spans)


def test_a_span_is_ready_when_its_ancestry_reaches_a_root_and_waits_otherwise() -> None:
    found = split([span(3, 2), span(2, 1), span(1), span(5, 4), span(6, 5)])
    assert names(found.ready) == ["s1", "s2", "s3"]
    assert names(found.waiting) == ["s5", "s6"]  # s4 has not arrived


def test_a_remote_parent_or_a_cycle_ends_the_walk_as_a_root_does() -> None:
    found = split([span(2, 1, remote=True), span(3, 2), span(7, 8), span(8, 7), span(9, 9)])
    assert names(found.ready) == ["s2", "s3", "s7", "s8", "s9"]
    assert found.waiting == ()


def test_traces_are_apart_and_a_trace_resolved_as_it_is_is_ready_whole() -> None:
    other = "f" * 32
    found = split([span(2, 1), span(1, trace=other), span(3, 2, trace=other), span(4, 9, trace=other)])
    assert names(found.ready) == ["s1"] and names(found.waiting) == ["s2", "s3", "s4"]  # s3's s2 is in another trace
    found = split([span(2, 1), span(4, 9, trace=other)], as_they_are={TRACE})
    assert names(found.ready) == ["s2"] and names(found.waiting) == ["s4"]


def test_a_span_given_twice_is_split_once() -> None:
    found = split([span(1), span(1), span(2, 1), span(2, 1)])
    assert names(found.ready) == ["s1", "s2"]


def test_remote_parents_are_read_from_the_span_flags() -> None:
    def request(flags: Any) -> dict[str, Any]:
        item = {"traceId": TRACE, "spanId": "00f067aa0ba902b7", "parentSpanId": "00f067aa0ba902b1", "flags": flags}
        item |= {"startTimeUnixNano": "1", "endTimeUnixNano": "2"}
        return {"resourceSpans": [{"scopeSpans": [{"spans": [item]}]}]}

    remote = [decode_traces(request(flags)).spans[0].parent_remote for flags in (0x300, 0x100, 0x200, 0, None, "x")]
    assert remote == [True, False, False, False, False, False]


@pytest.mark.parametrize(("folder", "n"), REQUESTS, ids=[f"{f}-request-{n}" for f, n in REQUESTS])
def test_every_span_of_every_capture_comes_back_as_kept_and_maps_as_it_does_whole(folder: str, n: int) -> None:
    for path in encodings(folder, n):
        spans = decode_traces(request_data(path)).spans
        held = [loads(dumps(found)) for found in spans]
        assert held == [kept(found) for found in spans]
        assert [kept(found) for found in held] == held  # keeping what is kept changes nothing
        assert map_spans(held) == map_spans(spans)


def _span(span_id: int, parent: int | None, name: str, attributes: dict[str, Any], **rest: Any) -> Span:
    return Span(
        trace_id=TRACE,
        span_id=f"{span_id:016x}",
        parent_id=None if parent is None else f"{parent:016x}",
        name=name,
        kind=1,
        start_ns=1_700_000_000_000_000_000 + span_id * 1000,
        end_ns=1_700_000_000_000_000_000 + 100_000 - span_id,
        status=rest.pop("status", 0),
        status_message=rest.pop("status_message", ""),
        attributes=attributes,
        **rest,
    )


def _conversation(turns: int) -> list[dict[str, Any]]:
    """A long chat as the conventions record it: every model span carries all of it."""
    out: list[dict[str, Any]] = [{"role": "system", "parts": [{"type": "text", "content": "Be brief. " * 200}]}]
    for turn in range(turns):
        out.append({"role": "user", "parts": [{"type": "text", "content": f"question {turn}: " + "why? " * 300}]})
        out.append({"role": "assistant", "parts": [{"type": "text", "content": f"answer {turn} " + "so. " * 300}]})
    return out


RESOURCE = {"service.name": "svc", "process.command_line": "python agent.py --user alice " + "x" * 5_000}


def _trace() -> list[Span]:
    """An agent whose model calls carry a long conversation in each form the readers know, a tool
    call that takes its arguments from the model's request, a failed tool with a stack trace, and a
    handoff whose target is an attribute that only looks like a flattened message."""
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    asked = [
        {"role": "assistant", "parts": [{"type": "tool_call", "name": "lookup", "id": "c1", "arguments": {"q": 1}}]}
    ]
    flat = {
        f"llm.input_messages.{i}.message.{k}": v
        for i in range(40)
        for k, v in (("role", "user"), ("content", f"m{i} " * 400))
    }
    flat |= {"llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": "done"}
    crash = SpanEvent(
        "exception",
        5,
        {"exception.type": "KeyError", "exception.message": "k", "exception.stacktrace": "at x\n" * 2000},
    )
    return [
        _span(
            1,
            None,
            "invoke_agent bot",
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "bot",
                "pydantic_ai.all_messages": json.dumps(_conversation(30)),
            },
            resource=RESOURCE,
        ),
        _span(
            2,
            1,
            "chat m",
            {
                **chat,
                "gen_ai.input.messages": json.dumps(_conversation(60)),
                "gen_ai.output.messages": json.dumps(asked),
            },
            resource=RESOURCE,
        ),
        _span(
            3,
            1,
            "execute_tool lookup",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "lookup",
                "gen_ai.tool.call.result": "r" * 10_000,
            },
            resource=RESOURCE,
        ),
        _span(4, 1, "chat m", {**chat, **flat, "llm.invocation_parameters": "{}"}, resource=RESOURCE),
        _span(
            5,
            1,
            "execute_tool fail",
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "fail"},
            status=STATUS_ERROR,
            events=(SpanEvent("log", 1, {"x": "y" * 9_000}), crash),
            resource=RESOURCE,
        ),
        _span(6, 1, "handoff", {"gen_ai.operation.name": "handoff", "gen_ai.completion.0.to_agent": "billing"}),
    ]


def test_a_held_span_keeps_what_the_mapping_reads_and_maps_to_the_same_events() -> None:
    spans = _trace()
    held = [loads(dumps(found)) for found in spans]
    assert map_spans(held) == map_spans(spans)
    events = map_spans(held).events
    assert events[0].payload["task"].startswith("question 29:")  # the agent's last user message
    called = next(e for e in events if e.type == "tool.called")
    assert called.payload["arguments"] == {"q": 1} and called.payload["call_id"] == "c1"  # from the model's request
    assert next(e for e in events if e.type == "handoff.started").payload["to_agent"] == "billing"
    failed = next(e for e in events if e.type == "error.raised")
    assert (failed.payload["error_type"], failed.payload["error"]) == ("KeyError", "k")
    whole = sum(len(json.dumps(found.attributes)) + len(json.dumps(found.resource)) for found in spans)
    assert whole > 350_000 and sum(len(dumps(found)) for found in spans) < 20_000  # the conversations went
    model = held[1]
    assert len(model.attributes["gen_ai.input.messages"]) == 1 and model.resource == {"service.name": "svc"}
    assert "llm.invocation_parameters" in held[3].attributes  # attributes the readers do not take stay
    assert not any(key.startswith("llm.input_messages") for key in held[3].attributes)
    assert held[4].events == (SpanEvent("exception", 5, {"exception.type": "KeyError", "exception.message": "k"}),)
    assert held[5].attributes == spans[5].attributes  # only looks like a message: the handoff reads it


def test_a_value_the_mapping_cuts_is_held_whole_since_the_cut_counts_what_it_cut() -> None:
    tool = _trace()[2]
    assert loads(dumps(tool)).attributes["gen_ai.tool.call.result"] == "r" * 10_000
    (result,) = (e for e in map_spans([loads(dumps(tool))]).events if e.type == "tool.result")
    assert result.payload["output"].endswith("…[cut 5904 chars]")  # cut to 4,096 from 10,000, not from what was held


def test_a_span_the_reduction_would_read_otherwise_is_kept_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard: were the readers to take more of the messages than the reduction keeps (here: all
    of their text), the span is held whole rather than mapped otherwise."""
    import afteraction.core.otlp_pending as pending

    model = _trace()[1]
    assert kept(model) != model
    readings = pending._readings
    monkeypatch.setattr(pending, "_readings", lambda span: (*readings(span), json.dumps(span.attributes)))
    assert kept(model) is model
