"""Scope: the host-established bounds of every record and every query; and Status."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from afteraction.errors import ValidationError
from afteraction.model import _check

__all__ = ["ELIGIBLE_STATUSES", "Scope", "Status"]


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a record belongs to. ``tenant``, ``app`` and ``project`` are required.

    Visibility narrows: a record is visible to a caller when the required parts are equal
    and each optional part of the record is either unset (shared across that level) or
    equal to the caller's.
    """

    tenant: str
    app: str
    project: str
    team: str | None = None
    agent: str | None = None
    user: str | None = None

    REQUIRED = ("tenant", "app", "project")
    OPTIONAL = ("team", "agent", "user")

    def __post_init__(self) -> None:
        for part in self.REQUIRED:
            _check.name(getattr(self, part), f"scope.{part}")
        for part in self.OPTIONAL:
            _check.optional_name(getattr(self, part), f"scope.{part}")

    def sees(self, record: Scope) -> bool:
        """True when a record in scope ``record`` is visible to a caller in this scope."""
        if (record.tenant, record.app, record.project) != (self.tenant, self.app, self.project):
            return False
        return all(
            getattr(record, part) is None or getattr(record, part) == getattr(self, part) for part in self.OPTIONAL
        )

    def to_dict(self) -> dict[str, str]:
        return {part: value for part in (*self.REQUIRED, *self.OPTIONAL) if (value := getattr(self, part))}

    @classmethod
    def from_dict(cls, data: object, field: str = "scope") -> Scope:
        items = _check.mapping(data, field)
        unknown = set(items) - set(cls.REQUIRED) - set(cls.OPTIONAL)
        if unknown:
            raise ValidationError(f"{field}.{sorted(unknown)[0]}", "is not a scope part")
        for part in cls.REQUIRED:
            if part not in items:
                raise ValidationError(f"{field}.{part}", "is required")
        values: dict[str, Any] = dict(items)
        return cls(**values)

    @classmethod
    def parse(cls, pairs: Mapping[str, str]) -> Scope:
        """From ``KEY=VALUE`` style pairs (the CLI's ``--scope``)."""
        return cls.from_dict(dict(pairs))


class Status(str, Enum):
    """The lifecycle of an Experience. Only Validated and Reinforced are ever injected."""

    CANDIDATE = "candidate"
    VALIDATED = "validated"
    QUARANTINED = "quarantined"
    CONTESTED = "contested"
    STALE = "stale"
    SUPERSEDED = "superseded"
    REVOKED = "revoked"
    REINFORCED = "reinforced"

    @classmethod
    def parse(cls, value: object, field: str = "status") -> Status:
        """Case-insensitive: ``Validated`` and ``validated`` are the same status."""
        if isinstance(value, Status):
            return value
        if isinstance(value, str):
            try:
                return cls(value.strip().lower())
            except ValueError:
                pass
        known = ", ".join(s.value for s in cls)
        raise ValidationError(field, f"must be one of {known}; got {_check.echoed(value)!r}")

    @property
    def label(self) -> str:
        return self.value.capitalize()


ELIGIBLE_STATUSES = frozenset({Status.VALIDATED, Status.REINFORCED})
