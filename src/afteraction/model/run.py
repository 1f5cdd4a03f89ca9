"""Run, Attempt, ToolCall: what an agent did; Evidence and Verdict: what the host's checks said."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from afteraction.errors import ValidationError
from afteraction.model import _check
from afteraction.model.scope import Scope

__all__ = ["Attempt", "Evidence", "EvidenceMethod", "Run", "RunState", "ToolCall", "Verdict"]

RunState = Literal["running", "completed", "failed"]
EvidenceMethod = Literal["check", "approval", "tool", "classifier"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call of a tool: its (sanitized) arguments and either a result or an error."""

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    result: Any = None
    error: str | None = None
    call_id: str | None = None
    at: datetime | None = None

    kind: Literal["tool_call"] = field(default="tool_call", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check.name(self.tool, "tool")
        _check.mapping(self.args, "args")

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": self.tool, "args": dict(self.args)}
        if self.result is not None:
            out["result"] = self.result
        if self.error is not None:
            out["error"] = self.error
        if self.call_id is not None:
            out["call_id"] = self.call_id
        if self.at is not None:
            out["at"] = _check.format_time(self.at)
        return out

    @classmethod
    def from_dict(cls, data: object, field: str = "call") -> ToolCall:
        items = _check.mapping(data, field)
        return cls(
            tool=_check.name(items.get("tool"), f"{field}.tool"),
            args=dict(_check.mapping(items.get("args", {}), f"{field}.args")),
            result=items.get("result"),
            error=_check.optional_text(items.get("error"), f"{field}.error"),
            call_id=_check.optional_name(items.get("call_id"), f"{field}.call_id"),
            at=_check.optional_time(items.get("at"), f"{field}.at"),
        )


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try at the task. A run that retries has several; the last one is what stood."""

    index: int
    calls: tuple[ToolCall, ...] = ()
    error: str | None = None

    kind: Literal["attempt"] = field(default="attempt", init=False, repr=False, compare=False)

    @property
    def failed(self) -> bool:
        """An attempt failed when it raised, or when its last call of some tool failed."""
        if self.error is not None:
            return True
        last: dict[str, ToolCall] = {}
        for call in self.calls:
            last[call.tool] = call
        return any(not call.ok for call in last.values())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "calls": [c.to_dict() for c in self.calls]}
        if self.error is not None:
            out["error"] = self.error
        return out

    @classmethod
    def from_dict(cls, data: object, field: str = "attempt") -> Attempt:
        items = _check.mapping(data, field)
        calls = items.get("calls", [])
        if not isinstance(calls, list):
            raise ValidationError(f"{field}.calls", "must be a list")
        return cls(
            index=_check.integer(items.get("index"), f"{field}.index"),
            calls=tuple(ToolCall.from_dict(c, f"{field}.calls[{i}]") for i, c in enumerate(calls)),
            error=_check.optional_text(items.get("error"), f"{field}.error"),
        )


@dataclass(frozen=True, slots=True)
class Evidence:
    """One finding of the host's verification: a check, a person's approval, a tool's outcome."""

    id: str
    passed: bool
    method: EvidenceMethod = "check"
    detail: str = ""
    approver: str | None = None
    required: bool = True

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "passed": self.passed, "method": self.method}
        if self.detail:
            out["detail"] = self.detail
        if self.approver is not None:
            out["approver"] = self.approver
        if not self.required:
            out["required"] = False
        return out

    @classmethod
    def from_dict(cls, data: object, field: str = "evidence") -> Evidence:
        items = _check.mapping(data, field)
        passed = items.get("passed")
        if not isinstance(passed, bool):
            raise ValidationError(f"{field}.passed", "must be true or false")
        required = items.get("required", True)
        if not isinstance(required, bool):  # "false" read as true made a passing run's optional check required
            raise ValidationError(f"{field}.required", "must be true or false")
        method = items.get("method", "check")
        if method not in ("check", "approval", "tool", "classifier"):
            raise ValidationError(f"{field}.method", "must be check, approval, tool or classifier")
        return cls(
            id=_check.name(items.get("id"), f"{field}.id"),
            passed=passed,
            method=method,
            detail=_check.text(items.get("detail", ""), f"{field}.detail", blank=True),
            approver=_check.optional_name(items.get("approver"), f"{field}.approver"),
            required=required,
        )


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of verification. A failing required check dominates any number of passes."""

    passed: bool
    evidence: tuple[Evidence, ...] = ()

    kind: Literal["verdict"] = field(default="verdict", init=False, repr=False, compare=False)

    @property
    def checks(self) -> tuple[str, ...]:
        """Ids of the passing evidence, in order."""
        return tuple(e.id for e in self.evidence if e.passed)

    @property
    def failures(self) -> tuple[str, ...]:
        return tuple(e.id for e in self.evidence if not e.passed and e.required)


@dataclass(frozen=True, slots=True)
class Run:
    """A finished (or running) task: its attempts, in order, and the checks recorded during it."""

    id: str
    task: str
    scope: Scope
    started_at: datetime
    attempts: tuple[Attempt, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    ended_at: datetime | None = None
    state: RunState = "running"
    error: str | None = None
    evidence: tuple[Evidence, ...] = ()
    session_id: str | None = None
    trace_id: str | None = None
    agent: str | None = None
    parent_id: str | None = None

    kind: Literal["run"] = field(default="run", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check.name(self.id, "run.id", limit=_check.MAX_ID)
        _check.text(self.task, "run.task")
        _check.aware(self.started_at, "run.started_at")

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(call for attempt in self.attempts for call in attempt.calls)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "task": self.task,
            "scope": self.scope.to_dict(),
            "started_at": _check.format_time(self.started_at),
            "state": self.state,
            "attempts": [a.to_dict() for a in self.attempts],
        }
        if self.env:
            out["env"] = dict(self.env)
        if self.ended_at is not None:
            out["ended_at"] = _check.format_time(self.ended_at)
        if self.error is not None:
            out["error"] = self.error
        if self.evidence:
            out["evidence"] = [e.to_dict() for e in self.evidence]
        for name in ("session_id", "trace_id", "agent", "parent_id"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out

    @classmethod
    def from_dict(cls, data: object, field: str = "run") -> Run:
        items = _check.mapping(data, field)
        state = items.get("state", "completed")
        if state not in ("running", "completed", "failed"):
            raise ValidationError(f"{field}.state", "must be running, completed or failed")
        attempts = items.get("attempts", [])
        evidence = items.get("evidence", [])
        if not isinstance(attempts, list):
            raise ValidationError(f"{field}.attempts", "must be a list")
        if not isinstance(evidence, list):
            raise ValidationError(f"{field}.evidence", "must be a list")
        return cls(
            id=_check.name(items.get("id"), f"{field}.id", limit=_check.MAX_ID),
            task=_check.text(items.get("task"), f"{field}.task"),
            scope=Scope.from_dict(items.get("scope"), f"{field}.scope"),
            started_at=_check.parse_time(items.get("started_at"), f"{field}.started_at"),
            attempts=tuple(Attempt.from_dict(a, f"{field}.attempts[{i}]") for i, a in enumerate(attempts)),
            env=_check.string_map(items.get("env"), f"{field}.env"),
            ended_at=_check.optional_time(items.get("ended_at"), f"{field}.ended_at"),
            state=state,
            error=_check.optional_text(items.get("error"), f"{field}.error"),
            evidence=tuple(Evidence.from_dict(e, f"{field}.evidence[{i}]") for i, e in enumerate(evidence)),
            session_id=_check.optional_name(items.get("session_id"), f"{field}.session_id"),
            trace_id=_check.optional_name(items.get("trace_id"), f"{field}.trace_id"),
            agent=_check.optional_name(items.get("agent"), f"{field}.agent"),
            parent_id=_check.optional_name(items.get("parent_id"), f"{field}.parent_id"),
        )
