"""Deleting sessions forgets what the OTLP span buffer holds for them, one suite over SQLite and
PostgreSQL: ``delete_sessions`` drops every span the tenant holds for the deleted sessions' traces
(a held span only ever joins a session of its own trace), and ``prune`` those of the sessions it
deletes and every span received before its cutoff, of one tenant or of all; in the deletion's
transaction, and of no other tenant. Otherwise a deleted session came back with the held spans'
events once they were placed."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from afteraction.errors import StoreError
from afteraction.store.events import EventStore
from afteraction.store.spans import HeldSpan, SpanBuffer, open_spans, session_traces
from tests.store.test_event_deletes import refuse_count_updates
from tests.store.test_events import event, store  # noqa: F401  (store: the fixture over every backend)

T1, T2, T3 = "a1" * 16, "b2" * 16, "c3" * 16
S1 = f"{T1}-{'1' * 16}"  # an OTLP session: <trace id>-<span id>
CUTOFF = datetime(2026, 2, 1, tzinfo=timezone.utc)
BEFORE, AFTER = CUTOFF.timestamp() - 100, CUTOFF.timestamp() + 100  # received, Unix seconds


def held(trace: str, span: int) -> HeldSpan:
    return HeldSpan(trace, f"{span:016x}", "{}")


def traces(buffer: SpanBuffer, tenant: str) -> list[str]:
    return [summary.trace_id for summary in buffer.summary(tenant)]


def buffer_of(store: EventStore) -> SpanBuffer:  # noqa: F811
    return open_spans(store.store)  # type: ignore[attr-defined]


def test_the_traces_a_session_id_names() -> None:
    assert session_traces([S1, f"{T2}-{'f' * 16}", S1]) == sorted([T1, T2])
    not_otlp = ["parent", f"{T1}-{'1' * 15}", f"{T1.upper()}-{'1' * 16}", f"{T1}-{'1' * 16}-x", f" {S1}"]
    assert session_traces(not_otlp) == []


def test_deleting_a_session_drops_the_spans_of_its_trace_in_its_tenant_only(store: EventStore) -> None:  # noqa: F811
    buffer = buffer_of(store)
    for tenant in ("a", "b"):
        store.add_many(tenant, [event("e1", session=S1, trace=T1), event("e2", session="aep", trace=T2)])
        buffer.hold(tenant, [held(T1, 2), held(T1, 3), held(T2, 2)], now=AFTER)
    assert store.delete_sessions("a", [S1]) == 1
    assert traces(buffer, "a") == [T2]
    assert traces(buffer, "b") == [T1, T2]  # the same trace in another tenant stays
    assert store.delete_sessions("a", ["aep"]) == 1  # an AEP session id names no trace: T2 stays
    assert traces(buffer, "a") == [T2]


def test_a_session_still_whole_in_the_buffer_is_dropped_from_it(store: EventStore) -> None:  # noqa: F811
    buffer = buffer_of(store)
    buffer.hold("a", [held(T1, 1), held(T2, 1)], now=AFTER)
    assert store.delete_sessions("a", [S1]) == 0  # no session stored yet: nothing to count, but its spans go
    assert traces(buffer, "a") == [T2]


def test_prune_drops_the_spans_of_what_it_deletes_and_all_received_before_its_cutoff(
    store: EventStore,  # noqa: F811
) -> None:
    buffer = buffer_of(store)
    for tenant in ("a", "b"):
        store.add_many(tenant, [event("old", "2026-01-01T00:00:00Z", session=S1, trace=T1)])
        store.add_many(tenant, [event("new", "2026-03-01T00:00:00Z", session="recent", trace=T2)])
        buffer.hold(tenant, [held(T1, 2), held(T2, 1)], now=AFTER)  # T1: a late span of the session pruned
        buffer.hold(tenant, [held(T3, 1)], now=BEFORE)  # an orphan received before the cutoff
        buffer.hold(tenant, [held(T3, 2)], now=AFTER)  # and one of the same trace after it
    assert store.prune("a", CUTOFF) == 1
    assert [(s.trace_id, s.spans) for s in buffer.summary("a")] == [(T2, 1), (T3, 1)]
    assert [(s.trace_id, s.spans) for s in buffer.summary("b")] == [(T1, 1), (T2, 1), (T3, 2)]  # not this prune's
    assert store.prune(None, CUTOFF) == 1  # every tenant: b's session, and b's spans from before
    assert [(s.trace_id, s.spans) for s in buffer.summary("b")] == [(T2, 1), (T3, 1)]
    assert traces(buffer, "a") == [T2, T3]
    assert store.prune(None, datetime(2027, 1, 1, tzinfo=timezone.utc)) == 2
    assert traces(buffer, "a") == traces(buffer, "b") == []


def test_a_failed_deletion_keeps_the_held_spans(store: EventStore) -> None:  # noqa: F811
    """The spans go in the deletion's transaction: a failure at its last step leaves them held."""
    buffer = buffer_of(store)
    store.add_many("a", [event("e1", session=S1, trace=T1)])
    buffer.hold("a", [held(T1, 2)], now=BEFORE)
    refuse_count_updates(store)
    with pytest.raises(StoreError, match="refused"):
        store.delete_sessions("a", [S1])
    with pytest.raises(StoreError, match="refused"):
        store.prune(None, CUTOFF)
    assert traces(buffer, "a") == [T1]
