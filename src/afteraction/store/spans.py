"""The span buffer: OTLP spans that wait for their ancestors, kept per tenant and trace in the
store, so every replica of the stateless service sees the same buffer.

The OTLP route holds the spans it cannot place yet (``afteraction.core.otlp_pending``), and takes
them back when a later export brings the ancestors they wait for; it drops them once their events
are stored (so a crash between the two leaves them buffered, and placing them again adds nothing:
event ids are derived). A span is stored as opaque text (the core's serializer, which keeps only
what the mapping reads) under its tenant, trace id and span id; holding the same span twice keeps one.

Bounds (``Bounds``): a trace that holds more than ``trace_spans`` spans, or whose first span waits
longer than ``age`` seconds, is *due*: ``release`` returns it whole, to be resolved as it is; while
the tenant holds more than ``tenant_spans`` spans or more than ``tenant_bytes`` bytes (the UTF-8
size of the stored text), its oldest traces are due too. A tenant never sees, takes or drops another
tenant's spans (PostgreSQL also enforces it by row-level security). The age is checked by ``release``,
that is when the tenant exports again: a span of a tenant that never does stays held until ``prune``.

Deleted sessions: a held span becomes an event of a session of its own trace only (OTLP session
ids are ``<trace id>-<span id>``, ``core.otlp_sessions``), and which one is known only once its
ancestors come. So deleting sessions (``EventStore.delete_sessions``, ``prune``) also drops, in the
same transaction, every span the tenant holds for their traces (``session_traces``), and ``prune``
every span received before its cutoff: a deleted session never comes back from the buffer (only
from what its trace exports after the deletion). The SQL lives in ``sqlite_spans`` and
``postgres_spans`` (``drop_traces``, ``drop_received_before``), run on the event store's transaction.

Backends: SQLite (``sqlite_spans``, table ``otlp_spans``, migration m008) and PostgreSQL
(``postgres_spans``, table ``afteraction_otlp_spans``, migration m008); one conformance suite,
``tests/store/test_spans.py`` (and ``test_span_buffer_*.py``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from afteraction.errors import ConfigError
from afteraction.store.base import Store

__all__ = ["Bounds", "HeldSpan", "Released", "SpanBuffer", "TraceSummary", "due", "open_spans", "session_traces"]


@dataclass(frozen=True, slots=True)
class Bounds:
    """How much a tenant's buffer holds (spans, and bytes of stored text), and for how long (seconds)."""

    trace_spans: int = 2_000
    tenant_spans: int = 20_000
    age: float = 900.0
    tenant_bytes: int = 64 << 20

    def __post_init__(self) -> None:
        if self.trace_spans < 1 or self.tenant_spans < 1 or self.tenant_bytes < 1 or not self.age > 0:
            raise ConfigError(f"span buffer bounds must be positive, got {self}")


@dataclass(frozen=True, slots=True)
class HeldSpan:
    """One buffered span: its trace and span ids (lowercase hex) and its serialized form."""

    trace_id: str
    span_id: str
    data: str


@dataclass(frozen=True, slots=True)
class TraceSummary:
    """What the buffer holds of one trace: its spans, when its first span arrived, and the size of
    their stored text (UTF-8 bytes)."""

    trace_id: str
    spans: int
    first: float
    size: int = 0


@dataclass(frozen=True, slots=True)
class Released:
    """The buffered spans ``release`` returns, and which of their traces were due (bounds passed)."""

    spans: tuple[HeldSpan, ...]
    due: frozenset[str]


def due(summaries: Sequence[TraceSummary], *, now: float, bounds: Bounds) -> frozenset[str]:
    """The traces to resolve as they are: over ``trace_spans``, first held ``age`` ago or more,
    then the oldest (by first arrival, then id) while the rest pass ``tenant_spans`` or ``tenant_bytes``."""
    found = {s.trace_id for s in summaries if s.spans > bounds.trace_spans or s.first <= now - bounds.age}
    spans = sum(s.spans for s in summaries if s.trace_id not in found)
    size = sum(s.size for s in summaries if s.trace_id not in found)
    for summary in sorted(summaries, key=lambda s: (s.first, s.trace_id)):
        if spans <= bounds.tenant_spans and size <= bounds.tenant_bytes:
            break
        if summary.trace_id not in found:
            found.add(summary.trace_id)
            spans -= summary.spans
            size -= summary.size
    return frozenset(found)


_OTLP_SESSION = re.compile(r"([0-9a-f]{32})-[0-9a-f]{16}")


def session_traces(ids: Iterable[str]) -> list[str]:
    """The traces whose held spans could become events of these sessions, sorted: an OTLP session
    id is ``<trace id>-<span id>`` (32 and 16 lowercase hex digits; ``core.otlp_sessions``), and a
    held span only ever joins a session of its own trace. Other ids (AEP sessions) name none."""
    return sorted({found[1] for id in ids if (found := _OTLP_SESSION.fullmatch(id))})


@runtime_checkable
class SpanBuffer(Protocol):
    def hold(self, tenant: str, spans: Sequence[HeldSpan], *, now: float) -> None:
        """Keep the spans, received at ``now`` (Unix seconds); a span already held is kept once."""
        ...

    def release(self, tenant: str, traces: Collection[str], *, now: float, bounds: Bounds) -> Released:
        """The held spans of ``traces`` and of every due trace (``due``), by trace then span id;
        nothing is removed (``drop`` does, once they are placed)."""
        ...

    def drop(self, tenant: str, spans: Sequence[tuple[str, str]]) -> None:
        """Forget the held spans with these (trace id, span id); unknown ones are ignored."""
        ...

    def summary(self, tenant: str) -> list[TraceSummary]:
        """What the tenant holds, per trace (spans, first arrival, size), by trace id."""
        ...


def open_spans(store: Store) -> SpanBuffer:
    """The span buffer in the same database as ``store``."""
    from afteraction.store.sqlite import SQLiteStore

    if isinstance(store, SQLiteStore):
        from afteraction.store.sqlite_spans import SQLiteSpans

        return SQLiteSpans(store)
    if type(store).__name__ == "PostgresStore":
        from afteraction.store.postgres_spans import PostgresSpans

        return PostgresSpans(store)  # type: ignore[arg-type]
    raise ConfigError(f"the OTLP span buffer needs SQLite or PostgreSQL, not {store!r}")
