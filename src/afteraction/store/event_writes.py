"""What one write of events stores, whichever backend: each event's row values and JSON text,
the per-session and per-type folds, and which events are new.

``event_json`` is the stored text of an event: ``Event.to_dict`` encoded compactly (UTF-8 kept,
no spaces), byte for byte what ``json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))``
makes of it. It is built field by field with the json module's C encoders instead of through
the intermediate dict and the generic encoder, which cost more than the SQL insert of the event.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from json.encoder import encode_basestring
from typing import Any

from afteraction.model import Event

__all__ = ["SessionRow", "by_tenant", "event_json", "fresh", "micros", "session_rows", "split", "type_counts"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def micros(value: datetime) -> int:
    """An instant as integer microseconds since the Unix epoch (UTC): how instants are stored."""
    return (value - _EPOCH) // _MICROSECOND


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _not_json(value: object) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# No circular-reference markers: a marker left behind by a failed call would be shared by the next
# ones. A value nested in itself (never one that was sanitized) ends in RecursionError instead.
_make: Any = getattr(json.encoder, "c_make_encoder", None)  # the C accelerator (absent on some interpreters)
_value: Any = None if _make is None else _make(None, _not_json, encode_basestring, None, ":", ",", False, False, True)
_ENVELOPE = frozenset(("specversion", "id", "time", "source", "type", "session_id", "trace_id", "payload", "signature"))
_OPTIONAL = tuple(
    (name, f',"{name}":')
    for name in (
        *("parent_session_id", "agent_role", "subject", "causation_id", "idempotency_key", "schema"),
        *("content_type", "tenant", "labels", "extensions"),
    )
)
_OPTIONAL_NAMES = frozenset(name for name, _ in _OPTIONAL)


def event_json(event: Event) -> str:
    """The JSON text an event is stored as (see the module's docstring)."""
    extra = event.extra
    if _value is None or (extra and not (_ENVELOPE.isdisjoint(extra) and _OPTIONAL_NAMES.isdisjoint(extra))):
        return _encode(event.to_dict())  # an extra field named like a known one takes its place in to_dict
    text = encode_basestring
    try:
        parts = [
            *('{"specversion":', text(event.specversion), ',"id":', text(event.id), ',"time":', text(event.time)),
            *(',"source":', text(event.source), ',"type":', text(event.type)),
            *(',"session_id":', text(event.session_id), ',"trace_id":', text(event.trace_id)),
        ]
    except TypeError:  # not a string (a datetime given as the time): the generic encoder says why
        return _encode(event.to_dict())
    for name, key in _OPTIONAL:
        value = getattr(event, name)
        if value is not None:
            parts.append(key)
            parts.extend(_value(dict(value) if isinstance(value, Mapping) else value, 0))
    parts.append(',"payload":')
    parts.extend(_value(dict(event.payload), 0))
    if event.signature is not None:
        parts.append(',"signature":')
        parts.extend(_value(dict(event.signature), 0))
    if extra:
        parts.append(",")
        parts.append("".join(_value(dict(extra), 0))[1:-1])
    parts.append("}")
    return "".join(parts)


@dataclass(slots=True)
class SessionRow:
    """What one write adds to one session: folded into the stored row by each backend's upsert."""

    trace_id: str
    parent: str | None
    source: str
    started_at: int
    ended_at: int
    events: int

    def values(self) -> tuple[str, str | None, str, int, int, int]:
        return (self.trace_id, self.parent, self.source, self.started_at, self.ended_at, self.events)


def session_rows(new: Sequence[Event], instants: Sequence[int] | None = None) -> dict[str, SessionRow]:
    """The new events of one tenant, folded per session (the parent is the first one given);
    ``instants``: their ``micros``, when the caller has them already."""
    rows: dict[str, SessionRow] = {}
    for n, event in enumerate(new):
        at = micros(event.instant) if instants is None else instants[n]
        parent = event.parent_session_id or None  # the SDKs send "" for a root session
        found = rows.get(event.session_id)
        if found is None:
            rows[event.session_id] = SessionRow(event.trace_id, parent, event.source, at, at, 1)
            continue
        if at < found.started_at:
            found.started_at, found.source = at, event.source
        if at > found.ended_at:
            found.ended_at = at
        found.events += 1
        if found.parent is None:
            found.parent = parent
    return rows


def type_counts(new: Sequence[Event]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for event in new:
        counts[event.type] = counts.get(event.type, 0) + 1
    return counts


def by_tenant(groups: Sequence[tuple[str, Sequence[Event]]]) -> dict[str, list[Event]]:
    """The groups' events joined per tenant, in order (one write per tenant, not per group)."""
    joined: dict[str, list[Event]] = {}
    for tenant, events in groups:
        joined.setdefault(tenant, []).extend(events)
    return joined


def split(groups: Sequence[tuple[str, Sequence[Event]]], added: dict[str, list[bool]]) -> list[list[bool]]:
    """Each group's share of its tenant's results, in the order of ``by_tenant``."""
    taken = dict.fromkeys(added, 0)
    results = []
    for tenant, events in groups:
        start = taken[tenant]
        results.append(added[tenant][start : start + len(events)])
        taken[tenant] = start + len(events)
    return results


def fresh(events: Sequence[Event], stored: set[str]) -> list[bool]:
    """For each event, whether it is new: not in ``stored`` and not earlier in ``events``."""
    seen = set(stored)
    added = []
    for event in events:
        added.append(event.id not in seen)
        seen.add(event.id)
    return added
