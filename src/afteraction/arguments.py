"""What a host passes to ``Memory``, checked where it is given: each problem is a
``ValidationError`` naming the argument and its rule, raised before anything is recorded or read
(inside a run, later, memory never raises; a mistake in setting it up is the host's to see)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from afteraction.core.capture import clean_env
from afteraction.errors import ConfigError, ValidationError
from afteraction.model import Scope, Skill, _check

__all__ = ["allowed", "aware", "environment", "experiences", "host_scope", "lesson_id", "run_id", "skill", "verifiers"]


def host_scope(value: object) -> Scope:
    if not isinstance(value, Scope):
        raise ValidationError("scope", f"must be a Scope built by the host, got {type(value).__name__}")
    return value


def allowed(value: object, field: str = "allow_args") -> tuple[str, ...]:
    """Argument names whose values are kept; one string is refused, not read as its letters."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        example = f" (write ({value!r},))" if isinstance(value, str) else ""
        raise ValidationError(field, f"must be a sequence of argument names, got {type(value).__name__}{example}")
    names = tuple(value)
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise ValidationError(f"{field}[{i}]", f"must be a string, got {type(name).__name__}")
    return names


def verifiers(value: object) -> Sequence[Callable[..., Any]]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable) or callable(value):
        raise ValidationError("verify", f"must be a list of verifiers, got {type(value).__name__}")
    found = tuple(value)
    for i, verifier in enumerate(found):
        if not callable(verifier):
            raise ValidationError(f"verify[{i}]", f"must be a verifier (a callable), got {type(verifier).__name__}")
    return found


def skill(value: object) -> Skill | None:
    if value is not None and not isinstance(value, Skill):
        raise ValidationError("skill", f"must be a Skill or None, got {type(value).__name__}")
    return value


def run_id(value: object) -> str | None:
    """The host's id for a run (what makes a retry idempotent): an id, or None for a new one."""
    return None if value is None else _check.name(value, "run_id", limit=_check.MAX_ID)


def environment(value: object) -> dict[str, str] | None:
    """A query's environment cleaned as a recorded run's is (``core.capture.clean_env``: values as
    text, cut and scrubbed), so that the same mapping given to a run and to a search matches."""
    if value is not None and not isinstance(value, Mapping):
        raise ValidationError("env", f"must be a mapping of names to values, got {type(value).__name__}")
    return None if value is None else clean_env(value)


def experiences(value: object) -> Iterable[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise ValidationError("experiences", f"must be an iterable of Experiences, got {type(value).__name__}")
    return value


def lesson_id(value: object) -> str | None:
    """A lesson id to look up; None when no lesson can have it (blank, too long, a control character), which
    every backend then answers alike: no such lesson."""
    if not isinstance(value, str):
        raise ValidationError("id", f"must be a string, got {type(value).__name__}")
    try:
        return _check.name(value, "id", limit=_check.MAX_ID)
    except ValidationError:
        return None


def aware(now: object) -> datetime:
    """What the host's clock gave, when it is an aware datetime; ConfigError otherwise (``datetime.now``, naive,
    would fail every run and search with a bare TypeError)."""
    if not isinstance(now, datetime) or now.utcoffset() is None:
        raise ConfigError(f"clock must return an aware datetime (e.g. datetime.now(timezone.utc)), got {now!r:.60}")
    return now
