"""The span buffer's bytes per tenant, one suite over SQLite and PostgreSQL: each trace's summary
says the UTF-8 size of what it holds, and while a tenant holds more than ``tenant_bytes`` its oldest
traces are due (resolved as they are), as they are past ``tenant_spans``. Before, a tenant could
hold 20,000 spans of any size."""

from __future__ import annotations

import pytest

from afteraction.errors import ConfigError
from afteraction.store.spans import Bounds, HeldSpan, SpanBuffer, TraceSummary, due
from tests.store.test_spans import T1, T2, T3, buffer, store  # noqa: F401  (fixtures over every backend)


def sized(trace: str, span: int, size: int) -> HeldSpan:
    return HeldSpan(trace, f"{span:016x}", "x" * size)


def test_the_summary_says_the_bytes_each_trace_holds(buffer: SpanBuffer) -> None:  # noqa: F811
    buffer.hold("acme", [sized(T1, 1, 10), sized(T1, 2, 5), HeldSpan(T2, "0" * 16, "é" * 10)], now=100.0)
    assert buffer.summary("acme") == [TraceSummary(T1, 2, 100.0, 15), TraceSummary(T2, 1, 100.0, 20)]  # UTF-8


def test_over_the_tenants_bytes_the_oldest_traces_are_due_first(buffer: SpanBuffer) -> None:  # noqa: F811
    bounds = Bounds(trace_spans=100, tenant_spans=1_000, age=3_600, tenant_bytes=250)
    buffer.hold("acme", [sized(T2, 1, 100)], now=100.0)
    buffer.hold("acme", [sized(T1, 1, 60), sized(T1, 2, 40)], now=110.0)
    buffer.hold("acme", [sized(T3, 1, 50)], now=120.0)
    assert buffer.release("acme", set(), now=121.0, bounds=bounds).due == frozenset()  # 250 bytes: within
    buffer.hold("acme", [sized(T3, 2, 1)], now=130.0)
    released = buffer.release("acme", set(), now=131.0, bounds=bounds)
    assert released.due == {T2} and [s.trace_id for s in released.spans] == [T2]
    buffer.hold("other", [sized(T1, 1, 1_000)], now=140.0)  # another tenant's bytes do not count
    assert buffer.release("acme", set(), now=141.0, bounds=bounds).due == {T2}
    big = Bounds(trace_spans=100, tenant_spans=1_000, age=3_600, tenant_bytes=10)
    assert buffer.release("other", set(), now=141.0, bounds=big).due == {T1}  # one trace over it: due itself


def test_due_counts_bytes_and_spans_together() -> None:
    summaries = [TraceSummary(T1, 1, 10.0, 500), TraceSummary(T2, 3, 5.0, 10), TraceSummary(T3, 1, 20.0, 10)]
    assert due(summaries, now=21.0, bounds=Bounds(tenant_bytes=600)) == frozenset()
    assert due(summaries, now=21.0, bounds=Bounds(tenant_bytes=519)) == {T2}  # oldest first, though small
    assert due(summaries, now=21.0, bounds=Bounds(tenant_bytes=500)) == {T1, T2}
    assert due(summaries, now=21.0, bounds=Bounds(tenant_spans=4, tenant_bytes=519)) == {T2}
    assert due(summaries, now=21.0, bounds=Bounds(tenant_spans=1, tenant_bytes=10_000)) == {T1, T2}


def test_the_bytes_bound_must_be_positive_and_defaults_to_64_mib() -> None:
    assert Bounds().tenant_bytes == 64 * 1024 * 1024
    with pytest.raises(ConfigError, match="positive"):
        Bounds(tenant_bytes=0)
