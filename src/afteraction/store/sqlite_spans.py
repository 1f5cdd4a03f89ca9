"""SQLiteSpans: the span buffer (``afteraction.store.spans``) in the SQLite file of the events,
table ``otlp_spans`` (migration m008). It shares the ``SQLiteStore``'s connections (one writer,
readers beside it). Times are Unix seconds (REAL), as the caller gives them.

``drop_traces`` and ``drop_received_before`` are what deleting sessions does to the buffer, on the
event store's connection, in its transaction (``SQLiteEvents.delete_sessions``, ``prune``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence

from afteraction.store.spans import Bounds, HeldSpan, Released, TraceSummary, due
from afteraction.store.sqlite import SQLiteStore

__all__ = ["SQLiteSpans", "drop_received_before", "drop_traces"]

_CHUNK = 400  # variables per IN (...) list
_INSERT = (
    "INSERT INTO otlp_spans (tenant, trace_id, span_id, received, data) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (tenant, trace_id, span_id) DO NOTHING"
)
_SUMMARY = (
    "SELECT trace_id, count(*), min(received), sum(length(CAST(data AS BLOB))) FROM otlp_spans "
    "WHERE tenant = ? GROUP BY trace_id ORDER BY trace_id"
)


def _summaries(db: sqlite3.Connection, tenant: str) -> list[TraceSummary]:
    rows = db.execute(_SUMMARY, (tenant,)).fetchall()
    return [TraceSummary(trace, int(count), float(first), int(size)) for trace, count, first, size in rows]


def drop_traces(db: sqlite3.Connection, tenant: str, traces: Sequence[str]) -> None:
    """Forget every span the tenant holds for these traces: in the caller's transaction."""
    for start in range(0, len(traces), _CHUNK):
        chunk = traces[start : start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        db.execute(f"DELETE FROM otlp_spans WHERE tenant = ? AND trace_id IN ({marks})", (tenant, *chunk))


def drop_received_before(db: sqlite3.Connection, tenant: str | None, before: float) -> None:
    """Forget every span received before ``before`` (Unix seconds), of ``tenant`` or of every
    tenant (None): in the caller's transaction."""
    if tenant is None:
        db.execute("DELETE FROM otlp_spans WHERE received < ?", (before,))
    else:
        db.execute("DELETE FROM otlp_spans WHERE tenant = ? AND received < ?", (tenant, before))


class SQLiteSpans:
    """The ``SpanBuffer`` over an open ``SQLiteStore`` (which owns the connection and closes it)."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store

    def hold(self, tenant: str, spans: Sequence[HeldSpan], *, now: float) -> None:
        if not spans:
            return
        with self.store._writing() as db:
            db.executemany(_INSERT, [(tenant, s.trace_id, s.span_id, now, s.data) for s in spans])

    def summary(self, tenant: str) -> list[TraceSummary]:
        with self.store._reading() as db:
            return _summaries(db, tenant)

    def release(self, tenant: str, traces: Collection[str], *, now: float, bounds: Bounds) -> Released:
        with self.store._snapshot() as db:  # the summary and the spans read in one snapshot
            summaries = _summaries(db, tenant)
            late = due(summaries, now=now, bounds=bounds)
            wanted = sorted(({s.trace_id for s in summaries} & set(traces)) | late)
            found: list[HeldSpan] = []
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                sql = (
                    "SELECT trace_id, span_id, data FROM otlp_spans "
                    f"WHERE tenant = ? AND trace_id IN ({', '.join('?' * len(chunk))}) ORDER BY trace_id, span_id"
                )
                found.extend(HeldSpan(*row) for row in db.execute(sql, (tenant, *chunk)))
        return Released(tuple(found), late)

    def drop(self, tenant: str, spans: Sequence[tuple[str, str]]) -> None:
        if not spans:
            return
        with self.store._writing() as db:
            db.executemany(
                "DELETE FROM otlp_spans WHERE tenant = ? AND trace_id = ? AND span_id = ?",
                [(tenant, trace, span) for trace, span in spans],
            )
