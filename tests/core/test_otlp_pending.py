"""Which spans can be mapped now and which wait for their ancestors, and the span serializer the
buffer keeps (every span of every capture comes back equal)."""

from __future__ import annotations

from typing import Any

import pytest

from afteraction.core.otlp_pending import dumps, loads, split
from afteraction.core.otlp_spans import Span, decode_traces
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
def test_every_span_of_every_capture_comes_back_from_the_serializer_equal(folder: str, n: int) -> None:
    for path in encodings(folder, n):
        for found in decode_traces(request_data(path)).spans:
            assert loads(dumps(found)) == found
