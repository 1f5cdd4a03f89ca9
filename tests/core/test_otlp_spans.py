"""decode_traces reads both JSON forms of an ExportTraceServiceRequest into the same spans, rejects
a span it cannot read by count, and raises nothing but ValidationError on any shape."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from afteraction.core.otlp_classify import agent_name
from afteraction.core.otlp_events import map_spans
from afteraction.core.otlp_spans import STATUS_ERROR, decode_traces
from afteraction.errors import ValidationError

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"


def b64(hex_id: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def request(*spans: Any, resource: Any = None) -> dict[str, Any]:
    return {
        "resourceSpans": [{"resource": resource or {}, "scopeSpans": [{"scope": {"name": "s"}, "spans": list(spans)}]}]
    }


def otlp_json_span(**changes: Any) -> dict[str, Any]:
    return {
        "traceId": TRACE,
        "spanId": SPAN,
        "name": "execute_tool t",
        "kind": 3,
        "startTimeUnixNano": "1795964213578647569",
        "endTimeUnixNano": 1795964213637800709,
        "status": {"code": 2, "message": "boom"},
        "attributes": [
            {"key": "s", "value": {"stringValue": "v"}},
            {"key": "i", "value": {"intValue": "42"}},
            {"key": "d", "value": {"doubleValue": 0.5}},
            {"key": "b", "value": {"boolValue": True}},
            {"key": "a", "value": {"arrayValue": {"values": [{"stringValue": "x"}, {"intValue": 1}]}}},
            {"key": "k", "value": {"kvlistValue": {"values": [{"key": "n", "value": {"stringValue": "m"}}]}}},
            {"key": "e", "value": {}},
        ],
        "events": [{"name": "exception", "timeUnixNano": "1795964213600000000", "attributes": []}],
        **changes,
    }


def test_otlp_json_and_the_protobuf_json_mapping_give_the_same_span() -> None:
    hexed = decode_traces(request(otlp_json_span(parentSpanId="")))
    mapped = otlp_json_span(
        traceId=b64(TRACE),
        spanId=b64(SPAN),
        kind="SPAN_KIND_CLIENT",
        status={"code": "STATUS_CODE_ERROR", "message": "boom"},
    )
    assert decode_traces(request(mapped)) == hexed
    (span,) = hexed.spans
    assert (span.trace_id, span.span_id, span.parent_id, span.kind, span.status) == (TRACE, SPAN, None, 3, STATUS_ERROR)
    assert span.start_ns == 1795964213578647569 and span.end_ns == 1795964213637800709
    assert dict(span.attributes) == {"s": "v", "i": 42, "d": 0.5, "b": True, "a": ["x", 1], "k": {"n": "m"}, "e": None}
    assert span.events[0].name == "exception" and span.scope == "s"


def test_snake_case_field_names_are_read_too() -> None:
    snake = {"trace_id": TRACE, "span_id": SPAN, "start_time_unix_nano": 5, "end_time_unix_nano": 9, "name": "x"}
    (span,) = decode_traces({"resource_spans": [{"scope_spans": [{"spans": [snake]}]}]}).spans
    assert (span.trace_id, span.start_ns, span.end_ns) == (TRACE, 5, 9)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"traceId": "abc"}, "traceId"),
        ({"traceId": "0" * 32}, "traceId"),
        ({"spanId": "zzzzzzzzzzzzzzzz"}, "spanId"),
        ({"spanId": 7}, "spanId"),
        ({"parentSpanId": "abc"}, "parentSpanId"),
        ({"startTimeUnixNano": "-1"}, "startTimeUnixNano"),
        ({"startTimeUnixNano": "99999999999999999999999"}, "startTimeUnixNano"),
        ({"endTimeUnixNano": "soon"}, "endTimeUnixNano"),
        ({"attributes": {"a": 1}}, "attributes"),
        ({"events": [3]}, "events"),
    ],
)
def test_a_span_that_cannot_be_read_is_rejected_and_the_others_kept(changes: dict[str, Any], reason: str) -> None:
    batch = decode_traces(request(otlp_json_span(**changes), otlp_json_span(spanId="b7ad6b7169203332")))
    assert batch.rejected == 1 and len(batch.spans) == 1
    assert reason in batch.errors[0] and "spans[0]" in batch.errors[0]


def test_an_end_before_the_start_is_read_as_the_start() -> None:
    (span,) = decode_traces(request(otlp_json_span(endTimeUnixNano="1"))).spans
    assert span.end_ns == span.start_ns


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (None, "body"),
        ([], "body"),
        ({"resourceSpans": 1}, "resourceSpans"),
        ({"resourceSpans": ["x"]}, "resourceSpans[0]"),
        ({"resourceSpans": [{"resource": []}]}, "resourceSpans[0].resource"),
        ({"resourceSpans": [{"scopeSpans": [{"scope": 1}]}]}, "resourceSpans[0].scopeSpans[0].scope"),
    ],
)
def test_a_body_of_the_wrong_shape_raises_a_validation_error_naming_the_field(body: Any, field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        decode_traces(body)
    assert caught.value.field == field


def test_values_nested_too_deep_reject_the_span() -> None:
    value: dict[str, Any] = {"stringValue": "x"}
    for _ in range(40):
        value = {"arrayValue": {"values": [value]}}
    batch = decode_traces(request(otlp_json_span(attributes=[{"key": "deep", "value": value}])))
    assert batch.rejected == 1 and "nested" in batch.errors[0]


_junk = st.none() | st.booleans() | st.integers() | st.text(max_size=20) | st.lists(st.integers(), max_size=2)
_ids = st.sampled_from(["00f067aa0ba902b1", "00f067aa0ba902b2", "00f067aa0ba902b3", b64("00f067aa0ba902b4"), ""])
_keys = st.sampled_from(
    ["gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.agent.name", "gen_ai.tool.call.arguments",
     "gen_ai.tool.call.result", "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.id",
     "error.type", "openinference.span.kind", "input.value", "gen_ai.request.model", "gen_ai.usage.input_tokens"]
)  # fmt: skip
_texts = st.sampled_from(
    ["invoke_agent", "invoke_workflow", "execute_tool", "chat", "handoff", "AGENT", "TOOL", "LLM", "x", "_OTHER",
     '{"a": 1}', "{'a': (1, 2)}", "{1, 2}", '[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]',
     '[{"role": "assistant", "parts": [{"type": "tool_call", "name": "t", "id": "c", "arguments": {"a": 1}}]}]',
     '{"properties": {}, "type": "object"}', '{"input_str": "{1: 2}", "tags": []}', "[" * 50]
) | st.text(max_size=30)  # fmt: skip
_values = st.one_of(
    st.builds(lambda v: {"stringValue": v}, _texts),
    st.builds(lambda v: {"intValue": v}, st.integers() | st.text(max_size=5)),
    st.builds(lambda v: {"doubleValue": v}, st.floats() | st.text(max_size=5)),
    st.builds(
        lambda v: {"arrayValue": {"values": v}}, st.lists(st.builds(lambda t: {"stringValue": t}, _texts), max_size=3)
    ),
    _junk,
)
_pair = st.builds(lambda k, v: {"key": k, "value": v}, _keys, _values)
_operation = st.builds(
    lambda v: {"key": "gen_ai.operation.name", "value": {"stringValue": v}},
    st.sampled_from(["invoke_agent", "invoke_workflow", "execute_tool", "chat", "handoff", "create_agent"]),
)
_attribute = st.one_of(_operation, _operation, _pair, _pair, _pair, _junk)
_time = st.integers(0, 2**62)
_span = st.fixed_dictionaries(
    {
        "traceId": st.sampled_from([TRACE, b64(TRACE)]),
        "spanId": _ids,
        "startTimeUnixNano": _time | _time.map(str),
        "endTimeUnixNano": _time | _time.map(str),
    },
    optional={
        "parentSpanId": _ids,
        "name": _texts | _junk,
        "kind": st.integers(-2, 9) | st.sampled_from(["SPAN_KIND_CLIENT", "nope"]),
        "status": st.fixed_dictionaries({}, optional={"code": st.integers(-1, 3) | _junk, "message": _texts | _junk})
        | _junk,
        "attributes": st.lists(_attribute, max_size=6),
        "events": st.lists(st.fixed_dictionaries({"name": st.just("exception"), "attributes": st.lists(_attribute)}))
        | _junk,
    },
)
_request = st.builds(
    lambda spans, resource: {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]},
    st.lists(_span, max_size=6),
    st.one_of(st.just({}), st.just({}), _junk),
)


@settings(max_examples=150, deadline=None)
@given(_request)
def test_random_otlp_shapes_raise_nothing_but_a_validation_error(data: Any) -> None:
    try:
        batch = decode_traces(data)
    except ValidationError:
        return
    map_spans(batch.spans)


def test_a_name_is_joined_into_one_line_before_it_is_scrubbed() -> None:
    """Found by a red team: a card number split over two lines was scrubbed as it came (no card on either
    line), then joined into one readable number."""
    named = {"key": "gen_ai.agent.name", "value": {"stringValue": "refund card 4111 1111\n1111 1111"}}
    (span,) = decode_traces(request(otlp_json_span(attributes=[named]))).spans
    assert agent_name(span) == "refund card [REDACTED:card]"
