"""Experience: a lesson and its Experience Packet layers; Hit: one ranked search result."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, ClassVar, Literal

from afteraction.errors import ValidationError
from afteraction.model import _check
from afteraction.model.scope import ELIGIBLE_STATUSES, Scope, Status

__all__ = ["Candidate", "Experience", "Hit", "Lesson", "Scenario", "Skill", "Solution", "Tried"]


def _given(items: Mapping[str, Any], name: str, default: object) -> object:
    """``items[name]``, or ``default`` when it is absent or null."""
    value = items.get(name)
    return default if value is None else value


def _items(strict: bool) -> int | None:
    """The count limit of a list field: an import's (``strict``) is ``MAX_ITEMS``; a stored record or a
    service's answer is read whatever its count (a record once stored must stay readable)."""
    return _check.MAX_ITEMS if strict else None


def _names(cls: type) -> frozenset[str]:
    """The field names of a record class: the keys its ``from_dict`` reads."""
    return frozenset(field.name for field in fields(cls))


@dataclass(frozen=True, slots=True)
class Scenario:
    """Packet layer 1: the situation: task, environment, symptoms, failure signature."""

    task: str
    environment: Mapping[str, str] = field(default_factory=dict)
    symptoms: tuple[str, ...] = ()
    failure_signature: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "environment": dict(self.environment),
            "symptoms": list(self.symptoms),
            "failure_signature": self.failure_signature,
        }

    @classmethod
    def from_dict(cls, data: object, field: str = "scenario", *, strict: bool = False) -> Scenario:
        items = _check.mapping(data, field)
        if strict:
            _check.known(items, _names(cls), field, "a scenario")
        return cls(
            task=_check.text(items.get("task"), f"{field}.task"),
            environment=_check.string_map(items.get("environment"), f"{field}.environment", limit=_items(strict)),
            symptoms=_check.strings(items.get("symptoms"), f"{field}.symptoms", limit=_items(strict)),
            failure_signature=_check.text(
                items.get("failure_signature") or "", f"{field}.failure_signature", blank=True
            ),
        )


@dataclass(frozen=True, slots=True)
class Tried:
    """One thing that was tried and failed, reduced to its error class."""

    attempt: int
    tool: str
    error_class: str
    args: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"attempt": self.attempt, "tool": self.tool, "error_class": self.error_class}
        if self.args:
            out["args"] = dict(self.args)
        return out

    @classmethod
    def from_dict(cls, data: object, field: str = "tried", *, strict: bool = False) -> Tried:
        items = _check.mapping(data, field)
        if strict:
            _check.known(items, _names(cls), field, "a tried step")
        return cls(
            attempt=_check.integer(items.get("attempt"), f"{field}.attempt"),
            tool=_check.name(items.get("tool"), f"{field}.tool"),
            error_class=_check.text(items.get("error_class"), f"{field}.error_class", limit=200),
            args=dict(_check.mapping(_given(items, "args", {}), f"{field}.args")),
        )


@dataclass(frozen=True, slots=True)
class Solution:
    """Packet layer 2: what was tried with each error class, what worked, the steps."""

    tried: tuple[Tried, ...] = ()
    worked: str = ""
    steps: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"tried": [t.to_dict() for t in self.tried], "worked": self.worked, "steps": list(self.steps)}

    @classmethod
    def from_dict(cls, data: object, field: str = "solution", *, strict: bool = False) -> Solution:
        items = _check.mapping(data, field)
        if strict:
            _check.known(items, _names(cls), field, "a solution")
        tried = _given(items, "tried", [])
        if not isinstance(tried, list):
            raise ValidationError(f"{field}.tried", "must be a list")
        return cls(
            tried=tuple(Tried.from_dict(t, f"{field}.tried[{i}]", strict=strict) for i, t in enumerate(tried)),
            worked=_check.text(items.get("worked") or "", f"{field}.worked", blank=True),
            steps=_check.strings(items.get("steps"), f"{field}.steps", limit=_items(strict)),
        )


@dataclass(frozen=True, slots=True)
class Skill:
    """Packet layer 3: a transferable skill. Never derived by afteraction itself: it is
    authored by the host or a reflector, and ``authored_by`` says which."""

    statement: str
    authored_by: str
    applicable_when: tuple[str, ...] = ()
    not_applicable_when: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check.text(self.statement, "skill.statement", limit=4096)
        _check.name(self.authored_by, "skill.authored_by")

    def to_dict(self) -> dict[str, Any]:
        return {
            "statement": self.statement,
            "authored_by": self.authored_by,
            "applicable_when": list(self.applicable_when),
            "not_applicable_when": list(self.not_applicable_when),
        }

    @classmethod
    def from_dict(cls, data: object, field: str = "skill", *, strict: bool = False) -> Skill:
        items = _check.mapping(data, field)
        if strict:
            _check.known(items, _names(cls), field, "a skill")
        return cls(
            statement=_check.text(items.get("statement"), f"{field}.statement", limit=4096),
            authored_by=_check.name(items.get("authored_by"), f"{field}.authored_by"),
            applicable_when=_check.strings(
                items.get("applicable_when"), f"{field}.applicable_when", limit=_items(strict)
            ),
            not_applicable_when=_check.strings(
                items.get("not_applicable_when"), f"{field}.not_applicable_when", limit=_items(strict)
            ),
        )


@dataclass(frozen=True, slots=True)
class Experience:
    """A stored lesson. ``supporting`` / ``contradicting`` count independent evidence;
    ``confidence`` is normally (1 + S) / (2 + S + F). ``revision`` guards updates.

    ``wordings`` are the tasks of later verified runs the lesson was given to, in their own
    words (at most ``MAX_WORDINGS``, newest last): a lesson is found by them as by its task.
    ``outcome_keys`` are digests of the keys of the reuse outcomes counted in S and F (the newest
    ``MAX_OUTCOME_KEYS``; ``core.trust.outcome_digest``), so the same outcome reported twice
    counts once. ``status_reason`` says why a person set the status (``core.trust.set_status``:
    Revoked, Superseded or Stale; or reinstated)."""

    #: Wordings a lesson keeps; the oldest goes when a new one comes.
    MAX_WORDINGS: ClassVar[int] = 3
    #: Characters of one wording.
    WORDING_CHARS: ClassVar[int] = 300
    #: Outcome keys a lesson remembers.
    MAX_OUTCOME_KEYS: ClassVar[int] = 64
    #: Characters of a status reason.
    REASON_CHARS: ClassVar[int] = 500
    #: The largest revision (PostgreSQL stores it as ``integer``; every backend keeps one bound), and an
    #: import's, which leaves room for as many updates again (one at MAX_REVISION takes no outcome).
    MAX_REVISION, MAX_IMPORTED_REVISION = 2**31 - 1, 2**30

    id: str
    task_id: str
    task: str
    lesson: str
    status: Status
    confidence: float
    scope: Scope
    created_at: datetime
    summary: str = ""
    scenario: Scenario | None = None
    solution: Solution | None = None
    skill: Skill | None = None
    checks: tuple[str, ...] = ()
    supporting: int = 1
    contradicting: int = 0
    revision: int = 1
    updated_at: datetime | None = None
    expires_at: datetime | None = None
    source: str = "run"
    wordings: tuple[str, ...] = ()
    outcome_keys: tuple[str, ...] = ()
    status_reason: str = ""

    kind: Literal["experience"] = field(default="experience", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check.name(self.id, "id", limit=_check.MAX_ID)
        _check.name(self.task_id, "task_id", limit=_check.MAX_ID)
        _check.text(self.task, "task")
        _check.text(self.lesson, "lesson")
        _check.text(self.summary, "summary", blank=True)
        if not isinstance(self.status, Status):
            object.__setattr__(self, "status", Status.parse(self.status))
        object.__setattr__(self, "confidence", _check.probability(self.confidence, "confidence"))
        if not isinstance(self.scope, Scope):
            raise ValidationError("scope", "must be a Scope")
        _check.aware(self.created_at, "created_at")
        for name in ("updated_at", "expires_at"):  # a naive one cannot be compared with the clock's
            if (value := getattr(self, name)) is not None:
                if not isinstance(value, datetime):
                    raise ValidationError(name, f"must be a datetime or None, got {type(value).__name__}")
                _check.aware(value, name)
        _check.integer(self.supporting, "supporting")
        _check.integer(self.contradicting, "contradicting")
        _check.integer(self.revision, "revision", minimum=1, maximum=self.MAX_REVISION)
        _check.name(self.source, "source")
        _check.strings(self.wordings, "wordings", limit=self.MAX_WORDINGS, item_limit=self.WORDING_CHARS)
        _check.strings(self.outcome_keys, "outcome_keys", limit=self.MAX_OUTCOME_KEYS, item_limit=_check.MAX_ID)
        _check.text(self.status_reason, "status_reason", limit=self.REASON_CHARS, blank=True)

    def eligibility(self, now: datetime, *, min_confidence: float = 0.5) -> str | None:
        """None when this record may be injected at ``now``; otherwise the reason it may not."""
        if self.status not in ELIGIBLE_STATUSES:
            return f"status is {self.status.label}" + (f": {self.status_reason}" if self.status_reason else "")
        if self.confidence < min_confidence:
            return f"confidence {self.confidence:.2f} is below {min_confidence:.2f}"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "task_id": self.task_id,
            "task": self.task,
            "lesson": self.lesson,
            "status": self.status.value,
            "confidence": self.confidence,
            "scope": self.scope.to_dict(),
            "created_at": _check.format_time(self.created_at),
            "summary": self.summary,
            "checks": list(self.checks),
            "supporting": self.supporting,
            "contradicting": self.contradicting,
            "revision": self.revision,
            "source": self.source,
        }
        for name in ("scenario", "solution", "skill"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value.to_dict()
        for name in ("wordings", "outcome_keys"):
            if getattr(self, name):
                out[name] = list(getattr(self, name))
        if self.status_reason:
            out["status_reason"] = self.status_reason
        for name in ("updated_at", "expires_at"):
            value = getattr(self, name)
            if value is not None:
                out[name] = _check.format_time(value)
        return out

    @classmethod
    def from_dict(cls, data: object, *, now: datetime | None = None, strict: bool = False) -> Experience:
        """Parse an exported record. ``created_at`` defaults to ``now`` when absent; an optional field
        given as null is absent. ``strict`` (an import) refuses a key that is no field, at any depth."""
        items = _check.mapping(data, "experience")
        if strict:
            _check.known(items, _names(cls), "", "a lesson")
        for name in ("id", "task_id", "task", "lesson", "status", "confidence", "scope"):
            if name not in items:
                raise ValidationError(name, "is required")
        created = items.get("created_at")
        if created is None:
            if now is None:
                raise ValidationError("created_at", "is required")
            created_at = now
        else:
            created_at = _check.parse_time(created, "created_at")
        return cls(
            id=_check.name(items["id"], "id", limit=_check.MAX_ID),
            task_id=_check.name(items["task_id"], "task_id", limit=_check.MAX_ID),
            task=_check.text(items["task"], "task"),
            lesson=_check.text(items["lesson"], "lesson"),
            status=Status.parse(items["status"]),
            confidence=_check.probability(items["confidence"], "confidence"),
            scope=Scope.from_dict(items["scope"]),
            created_at=created_at,
            summary=_check.text(items.get("summary") or "", "summary", blank=True),
            scenario=None if items.get("scenario") is None else Scenario.from_dict(items["scenario"], strict=strict),
            solution=None if items.get("solution") is None else Solution.from_dict(items["solution"], strict=strict),
            skill=None if items.get("skill") is None else Skill.from_dict(items["skill"], strict=strict),
            checks=_check.strings(items.get("checks"), "checks", limit=_items(strict), item_limit=_check.MAX_NAME),
            supporting=_check.integer(_given(items, "supporting", 1), "supporting"),
            contradicting=_check.integer(_given(items, "contradicting", 0), "contradicting"),
            revision=_revision(items, strict=strict),
            updated_at=_check.optional_time(items.get("updated_at"), "updated_at"),
            expires_at=_check.optional_time(items.get("expires_at"), "expires_at"),
            source=_check.name(items.get("source") or "import", "source"),
            wordings=_check.strings(
                items.get("wordings"), "wordings", limit=cls.MAX_WORDINGS, item_limit=cls.WORDING_CHARS
            ),
            outcome_keys=_check.strings(
                items.get("outcome_keys"), "outcome_keys", limit=cls.MAX_OUTCOME_KEYS, item_limit=_check.MAX_ID
            ),
            status_reason=_check.text(
                items.get("status_reason") or "", "status_reason", limit=cls.REASON_CHARS, blank=True
            ),
        )


def _revision(items: Mapping[str, Any], *, strict: bool) -> int:
    """A record's revision; an import's (``strict``) leaves room for updates: ``MAX_IMPORTED_REVISION``."""
    revision = _check.integer(_given(items, "revision", 1), "revision", minimum=1, maximum=Experience.MAX_REVISION)
    if strict and revision > (top := Experience.MAX_IMPORTED_REVISION):
        raise ValidationError("revision", f"must be at most {top} in an import (room for updates), got {revision}")
    return revision


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: the experience, its fused score and the factors behind it."""

    experience: Experience
    score: float
    relevance: float
    factors: Mapping[str, float] = field(default_factory=dict)

    kind: Literal["hit"] = field(default="hit", init=False, repr=False, compare=False)

    @property
    def id(self) -> str:
        return self.experience.id

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.experience.id,
            "task_id": self.experience.task_id,
            "score": round(self.score, 6),
            "relevance": round(self.relevance, 6),
            "factors": {k: round(v, 6) for k, v in self.factors.items()},
            "experience": self.experience.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: object) -> Hit:
        """Parse what ``to_dict`` wrote (the remote client reads the service's hits so)."""
        items = _check.mapping(data, "hit")
        factors = _check.mapping(items.get("factors", {}), "hit.factors")
        return cls(
            experience=Experience.from_dict(items.get("experience")),
            score=_check.number(items.get("score"), "hit.score"),
            relevance=_check.number(items.get("relevance"), "hit.relevance"),
            factors={name: _check.number(value, f"hit.factors.{name}") for name, value in factors.items()},
        )


@dataclass(frozen=True, slots=True)
class Lesson:
    """A stored lesson as ``Memory.lessons()`` lists it: may it be injected now, and if not, why."""

    experience: Experience
    eligible: bool
    reason: str | None

    @classmethod
    def at(cls, experience: Experience, now: datetime, *, min_confidence: float) -> Lesson:
        """The lesson as it stands at ``now`` (``Experience.eligibility``)."""
        reason = experience.eligibility(now, min_confidence=min_confidence)
        return cls(experience, reason is None, reason)

    def to_dict(self) -> dict[str, Any]:
        return {**self.experience.to_dict(), "eligible": self.eligible, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Candidate:
    """An eligible record matched by a store's search. ``text_score`` is the backend's BM25
    (higher is better; 0 when the record came from the vector channel only); it orders
    candidates within one query and is not comparable across backends. ``stems``, when the
    store has them at hand, are the stems of the record's searchable text
    (``core.text.searchable``), which saves the ranker stemming it again. ``vector_score`` is
    the cosine similarity of the record's vector to the query's (None: no vector compared)."""

    experience: Experience
    text_score: float
    stems: frozenset[str] | None = None
    vector_score: float | None = None
