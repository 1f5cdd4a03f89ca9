"""PostgresSpans: the span buffer (``afteraction.store.spans``) in PostgreSQL, shared by every
replica of the service: table ``afteraction_otlp_spans`` (migration m008), under row-level
security (each transaction sets ``afteraction.tenant`` first; the queries name the tenant too).
Times are Unix seconds (double precision), as the caller gives them.

``drop_traces`` and ``drop_received_before`` are what deleting sessions does to the buffer, on the
event store's cursor, in its transaction (``PostgresEvents.delete_sessions``, ``prune``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import psycopg

from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_service_schema import OTLP_SPANS
from afteraction.store.spans import Bounds, HeldSpan, Released, TraceSummary, due

__all__ = ["PostgresSpans", "drop_received_before", "drop_traces"]

_INSERT = f"""
    INSERT INTO {OTLP_SPANS} (tenant, trace_id, span_id, received, data)
    SELECT %s, t, s, %s, d FROM unnest(%s::text[], %s::text[], %s::text[]) AS u(t, s, d)
    ON CONFLICT (tenant, trace_id, span_id) DO NOTHING
"""
# octet_length reads a stored (TOASTed) value's size from its header, not the value
_SUMMARY = (
    f"SELECT trace_id, count(*), min(received), sum(octet_length(data)) FROM {OTLP_SPANS} "
    "WHERE tenant = %s GROUP BY trace_id ORDER BY trace_id"
)
_SELECT = (
    f"SELECT trace_id, span_id, data FROM {OTLP_SPANS} WHERE tenant = %s AND trace_id = ANY(%s) "
    "ORDER BY trace_id, span_id"
)
_DELETE = f"""
    DELETE FROM {OTLP_SPANS} AS o USING unnest(%s::text[], %s::text[]) AS u(t, s)
    WHERE o.tenant = %s AND o.trace_id = u.t AND o.span_id = u.s
"""
_Cursor = psycopg.Cursor[tuple[Any, ...]]


def _summaries(cur: _Cursor, tenant: str) -> list[TraceSummary]:
    cur.execute(_SUMMARY, (tenant,))
    return [TraceSummary(str(t), int(n), float(first), int(size)) for t, n, first, size in cur.fetchall()]


def drop_traces(cur: _Cursor, tenant: str, traces: Sequence[str]) -> None:
    """Forget every span the tenant holds for these traces: in the caller's transaction, which
    has set ``afteraction.tenant`` to ``tenant`` (the DELETE policy keys on it)."""
    if traces:
        cur.execute(f"DELETE FROM {OTLP_SPANS} WHERE tenant = %s AND trace_id = ANY(%s)", (tenant, list(traces)))


def drop_received_before(cur: _Cursor, tenant: str | None, before: float) -> None:
    """Forget every span received before ``before`` (Unix seconds), of ``tenant`` or of every tenant
    (None: the transaction reads every tenant's rows, ``all_tenants``, then deletes each tenant's
    as that tenant): in the caller's transaction."""
    if tenant is None:
        cur.execute(f"SELECT DISTINCT tenant FROM {OTLP_SPANS} WHERE received < %s ORDER BY tenant", (before,))
        owners = [str(owner) for (owner,) in cur.fetchall()]
    else:
        owners = [tenant]
    for owner in owners:
        cur.execute("SELECT set_config('afteraction.tenant', %s, true)", (owner,))
        cur.execute(f"DELETE FROM {OTLP_SPANS} WHERE tenant = %s AND received < %s", (owner, before))


class PostgresSpans:
    """The ``SpanBuffer`` over an open ``PostgresStore`` (which owns the pool and closes it)."""

    def __init__(self, store: PostgresStore) -> None:
        store.require_service()  # the GRANTs to run when the role lacks the service's tables
        self.store = store

    def hold(self, tenant: str, spans: Sequence[HeldSpan], *, now: float) -> None:
        if not spans:
            return
        columns = ([s.trace_id for s in spans], [s.span_id for s in spans], [s.data for s in spans])
        with self.store._transaction(tenant) as cur:
            cur.execute(_INSERT, (tenant, now, *columns))

    def summary(self, tenant: str) -> list[TraceSummary]:
        with self.store._transaction(tenant) as cur:
            return _summaries(cur, tenant)

    def release(self, tenant: str, traces: Collection[str], *, now: float, bounds: Bounds) -> Released:
        with self.store._transaction(tenant) as cur:
            summaries = _summaries(cur, tenant)
            late = due(summaries, now=now, bounds=bounds)
            wanted = sorted(({s.trace_id for s in summaries} & set(traces)) | late)
            found: list[HeldSpan] = []
            if wanted:
                cur.execute(_SELECT, (tenant, wanted))
                found = [HeldSpan(str(t), str(s), str(d)) for t, s, d in cur.fetchall()]
        return Released(tuple(found), late)

    def drop(self, tenant: str, spans: Sequence[tuple[str, str]]) -> None:
        if not spans:
            return
        with self.store._transaction(tenant) as cur:
            cur.execute(_DELETE, ([t for t, _ in spans], [s for _, s in spans], tenant))
