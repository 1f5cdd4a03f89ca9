"""Event: the Agent Event Protocol 0.2.0 envelope, validated as the protocol's schema says."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Any, Literal

from afteraction.errors import ValidationError
from afteraction.model import _check

__all__ = ["AGENT_ROLES", "EVENT_TYPES", "SPECVERSION", "Event"]

SPECVERSION = "0.2.0"
EVENT_TYPES = (
    "task.created",
    "task.updated",
    "task.completed",
    "task.failed",
    "tool.called",
    "tool.result",
    "memory.read",
    "memory.write",
    "handoff.started",
    "handoff.completed",
    "policy.blocked",
    "error.raised",
)
AGENT_ROLES = ("orchestrator", "subagent", "standalone")
AgentRole = Literal["orchestrator", "subagent", "standalone"]

_REQUIRED = ("specversion", "id", "time", "source", "type", "session_id", "trace_id", "payload")
_OPTIONAL_STRINGS = (
    "parent_session_id",
    "subject",
    "causation_id",
    "idempotency_key",
    "schema",
    "content_type",
    "tenant",
)
_KNOWN = frozenset((*_REQUIRED, *_OPTIONAL_STRINGS, "agent_role", "labels", "extensions", "signature"))
_REQUIRED_SET = frozenset(_REQUIRED)
_NOT_NULL = tuple(sorted(_KNOWN.difference(_REQUIRED)))
_TYPES = frozenset(EVENT_TYPES)
_IDS = (("id", _check.MAX_ID), ("source", 1024), ("session_id", _check.MAX_ID), ("trace_id", _check.MAX_ID))
_optional_strings = attrgetter(*_OPTIONAL_STRINGS)
_CONTROL = re.compile("[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Event:
    """One AEP envelope. ``time`` keeps the text as sent (signatures cover it byte for byte);
    ``instant`` is its parsed value, by which events are ordered."""

    id: str
    time: str
    source: str
    type: str
    session_id: str
    trace_id: str
    payload: Mapping[str, Any]
    specversion: str = SPECVERSION
    parent_session_id: str | None = None
    agent_role: AgentRole | None = None
    subject: str | None = None
    causation_id: str | None = None
    idempotency_key: str | None = None
    schema: str | None = None
    content_type: str | None = None
    tenant: str | None = None
    labels: Mapping[str, str] | None = None
    extensions: Mapping[str, Any] | None = None
    signature: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    instant: datetime = field(init=False, compare=False, repr=False)

    kind: Literal["event"] = field(default="event", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.specversion != SPECVERSION:
            raise ValidationError("specversion", f"must be {SPECVERSION!r}, got {_check.echoed(self.specversion)!r}")
        for name, limit in _IDS:
            value = getattr(self, name)
            if type(value) is not str or len(value) > limit or not value.strip():
                _check.text(value, name, limit=limit)  # raises, naming the rule
            if not value.isprintable() and _CONTROL.search(value):  # the read routes could never name it
                raise ValidationError(name, "must not contain control characters")
        if not (isinstance(self.type, str) and self.type in _TYPES):
            raise ValidationError("type", f"must be one of the 12 core types; got {_check.echoed(self.type)!r}")
        object.__setattr__(self, "instant", _check.parse_time(self.time, "time"))
        payload = _check.mapping(self.payload, "payload")
        if "$schema" in payload and not isinstance(payload["$schema"], str):  # the one member the AEP schema types
            got = "an object" if isinstance(payload["$schema"], Mapping) else _check.kind(payload["$schema"])
            raise ValidationError(
                "payload.$schema", f"must be a string (a URI of the payload's JSON Schema), got {got}"
            )
        if self.agent_role is not None and self.agent_role not in AGENT_ROLES:
            got = _check.echoed(self.agent_role)
            raise ValidationError("agent_role", f"must be one of {', '.join(AGENT_ROLES)}; got {got!r}")
        for name, value in zip(_OPTIONAL_STRINGS, _optional_strings(self), strict=True):
            if value is not None and not isinstance(value, str):
                raise ValidationError(name, f"must be a string, got {_check.kind(value)}")
        if self.labels is not None:
            for key, value in _check.mapping(self.labels, "labels").items():
                if not isinstance(value, str):
                    raise ValidationError(f"labels.{_check.echoed(key)}", "must be a string")
        if self.extensions is not None:
            _check.mapping(self.extensions, "extensions")
        if self.signature is not None:
            _check.mapping(self.signature, "signature")

    @classmethod
    def from_dict(cls, data: object) -> Event:
        """Validate a decoded JSON object against the AEP 0.2.0 envelope and build the Event."""
        items = _check.mapping(data, "event")
        if not items.keys() >= _REQUIRED_SET:
            for name in _REQUIRED:
                if name not in items:
                    raise ValidationError(name, "is required")
        if not isinstance(items["time"], str):
            raise ValidationError("time", "must be an RFC 3339 date-time string")
        if not isinstance(items["type"], str):
            raise ValidationError("type", "must be a string")
        if None in items.values():
            for key in _NOT_NULL:
                if key in items and items[key] is None:
                    raise ValidationError(key, "must not be null (leave it out instead)")
        if items.keys() <= _KNOWN:  # the usual event: no fields beyond the envelope's
            return cls(**items)
        known = {key: value for key, value in items.items() if key in _KNOWN}
        extra = {key: value for key, value in items.items() if key not in _KNOWN}
        return cls(**known, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """The envelope as JSON data, exactly the fields that were set, extras included."""
        out: dict[str, Any] = {
            "specversion": self.specversion,
            "id": self.id,
            "time": self.time,
            "source": self.source,
            "type": self.type,
            "session_id": self.session_id,
            "trace_id": self.trace_id,
        }
        for name in ("parent_session_id", "agent_role", *_OPTIONAL_STRINGS[1:], "labels", "extensions"):
            value = getattr(self, name)
            if value is not None:
                out[name] = dict(value) if isinstance(value, Mapping) else value
        out["payload"] = dict(self.payload)
        if self.signature is not None:
            out["signature"] = dict(self.signature)
        out.update(self.extra)
        return out
