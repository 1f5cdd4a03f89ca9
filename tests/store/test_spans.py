"""The SpanBuffer contract, one suite over SQLite and PostgreSQL: spans held per tenant and trace,
released by trace, due when a trace passes its size or age or the tenant its size (oldest first),
dropped once placed; a tenant never sees, releases or drops another tenant's spans."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from afteraction.errors import ConfigError
from afteraction.store.base import Store
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_service_schema import OTLP_SPANS
from afteraction.store.spans import Bounds, HeldSpan, SpanBuffer, TraceSummary, due, open_spans
from afteraction.store.sqlite import SQLiteStore

WIDE = Bounds(trace_spans=100, tenant_spans=1_000, age=3_600)
T1, T2, T3 = "1" * 32, "2" * 32, "3" * 32


def held(trace: str, span: int, data: str = "{}") -> HeldSpan:
    return HeldSpan(trace, f"{span:016x}", data)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    found: Store
    if request.param == "sqlite":
        found = SQLiteStore(tmp_path / "spans.db")
    else:
        found = PostgresStore(request.getfixturevalue("pg_url"))
    yield found
    found.close()


@pytest.fixture
def buffer(store: Store) -> SpanBuffer:
    return open_spans(store)


def test_held_spans_come_back_by_trace_and_stay_until_dropped(buffer: SpanBuffer) -> None:
    buffer.hold("acme", [held(T1, 2, '{"a":1}'), held(T2, 1), held(T1, 1)], now=100.0)
    released = buffer.release("acme", {T1, T3}, now=101.0, bounds=WIDE)
    assert released.spans == (held(T1, 1), held(T1, 2, '{"a":1}'))
    assert released.due == frozenset()
    assert buffer.release("acme", {T1}, now=101.0, bounds=WIDE).spans == released.spans  # a read, not a take
    buffer.drop("acme", [(T1, f"{1:016x}"), (T3, f"{9:016x}")])
    assert buffer.release("acme", {T1, T2}, now=102.0, bounds=WIDE).spans == (held(T1, 2, '{"a":1}'), held(T2, 1))
    assert buffer.summary("acme") == [TraceSummary(T1, 1, 100.0, 7), TraceSummary(T2, 1, 100.0, 2)]  # sizes


def test_a_span_held_twice_is_kept_once_with_its_first_arrival(buffer: SpanBuffer) -> None:
    buffer.hold("acme", [held(T1, 1)], now=100.0)
    buffer.hold("acme", [held(T1, 1, '{"again":true}'), held(T1, 2)], now=200.0)
    assert buffer.summary("acme") == [TraceSummary(T1, 2, 100.0, 4)]
    assert buffer.release("acme", {T1}, now=200.0, bounds=WIDE).spans == (held(T1, 1), held(T1, 2))


def test_a_trace_over_its_size_or_age_is_due_whole(buffer: SpanBuffer) -> None:
    bounds = Bounds(trace_spans=3, tenant_spans=1_000, age=60)
    buffer.hold("acme", [held(T1, i) for i in range(4)], now=100.0)  # one more than a trace holds
    buffer.hold("acme", [held(T2, 1)], now=100.0)
    buffer.hold("acme", [held(T3, 1)], now=150.0)
    released = buffer.release("acme", set(), now=159.0, bounds=bounds)
    assert released.due == {T1} and [s.trace_id for s in released.spans] == [T1] * 4
    released = buffer.release("acme", set(), now=160.0, bounds=bounds)  # T2 has waited 60 s
    assert released.due == {T1, T2} and {s.trace_id for s in released.spans} == {T1, T2}


def test_over_the_tenant_bound_the_oldest_traces_are_due_first(buffer: SpanBuffer) -> None:
    bounds = Bounds(trace_spans=100, tenant_spans=4, age=3_600)
    buffer.hold("acme", [held(T2, 1), held(T2, 2)], now=100.0)
    buffer.hold("acme", [held(T1, 1), held(T1, 2)], now=110.0)
    buffer.hold("acme", [held(T3, 1)], now=120.0)
    assert buffer.release("acme", set(), now=121.0, bounds=bounds).due == {T2}  # 5 held, 4 allowed
    buffer.hold("other", [held(T1, i) for i in range(4)], now=130.0)  # another tenant's spans do not count
    assert buffer.release("acme", set(), now=131.0, bounds=bounds).due == {T2}


def test_a_tenant_never_sees_releases_or_drops_another_tenants_spans(buffer: SpanBuffer) -> None:
    buffer.hold("acme", [held(T1, 1, '{"secret":1}')], now=100.0)
    assert buffer.release("globex", {T1}, now=101.0, bounds=WIDE).spans == ()
    assert buffer.summary("globex") == []
    buffer.drop("globex", [(T1, f"{1:016x}")])
    buffer.hold("globex", [held(T1, 1, '{"theirs":1}')], now=102.0)
    assert buffer.release("acme", {T1}, now=103.0, bounds=WIDE).spans == (held(T1, 1, '{"secret":1}'),)
    assert buffer.release("globex", {T1}, now=103.0, bounds=WIDE).spans == (held(T1, 1, '{"theirs":1}'),)
    expired = Bounds(trace_spans=100, tenant_spans=1_000, age=1)
    assert buffer.release("globex", set(), now=200.0, bounds=expired).spans == (held(T1, 1, '{"theirs":1}'),)


def test_due_is_pure_and_counts_only_what_it_is_given() -> None:
    summaries = [TraceSummary(T1, 5, 10.0), TraceSummary(T2, 1, 5.0), TraceSummary(T3, 1, 20.0)]
    assert due(summaries, now=21.0, bounds=Bounds(trace_spans=4, tenant_spans=2, age=100)) == {T1}
    assert due(summaries, now=21.0, bounds=Bounds(trace_spans=9, tenant_spans=2, age=100)) == {T1, T2}
    assert due(summaries, now=107.0, bounds=Bounds(trace_spans=9, tenant_spans=99, age=100)) == {T2}
    assert due([], now=0.0, bounds=Bounds()) == frozenset()


@pytest.mark.parametrize("bad", [{"trace_spans": 0}, {"tenant_spans": -1}, {"age": 0.0}])
def test_bounds_must_be_positive(bad: dict[str, float]) -> None:
    with pytest.raises(ConfigError, match="positive"):
        Bounds(**bad)  # type: ignore[arg-type]


def test_a_store_without_a_database_has_no_buffer() -> None:
    from afteraction.store.memory import MemoryStore

    with pytest.raises(ConfigError, match="SQLite or PostgreSQL"):
        open_spans(MemoryStore())


@pytest.mark.postgres
def test_postgres_row_level_security_hides_other_tenants_buffered_spans(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    try:
        open_spans(store).hold("acme", [held(T1, 1)], now=100.0)
        with psycopg.connect(pg_url, autocommit=False) as db:
            db.execute("SELECT set_config('afteraction.tenant', 'globex', true)")
            assert db.execute(f"SELECT count(*) FROM {OTLP_SPANS}").fetchone() == (0,)
            assert db.execute(f"DELETE FROM {OTLP_SPANS}").rowcount == 0
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                db.execute(f"INSERT INTO {OTLP_SPANS} VALUES ('acme', %s, 'x', 1, '{{}}')", (T2,))
        assert open_spans(store).summary("acme") == [TraceSummary(T1, 1, 100.0, 2)]
    finally:
        store.close()
