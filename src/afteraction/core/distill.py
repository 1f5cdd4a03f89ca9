"""Distill: a deterministic lesson and Experience Packet from a run and its verdict.

Zero LLM calls: the lesson is a template over what the run did and what the host's checks
said. The record ID is derived from the run ID and the scope, so finalizing the same run
twice yields the same record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from afteraction.core.errorclass import error_class
from afteraction.core.ids import experience_id
from afteraction.core.trust import confidence
from afteraction.model import Attempt, Experience, Run, Scenario, Skill, Solution, Status, ToolCall, Tried, Verdict
from afteraction.model._check import MAX_ITEMS, MAX_TEXT, more_items

__all__ = ["capped", "describe_call", "distill", "lesson_text", "within"]

_ARG_VALUE_LIMIT = 60
_SYMPTOM_LIMIT = 200


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _ARG_VALUE_LIMIT else text[: _ARG_VALUE_LIMIT - 1] + "…"


def describe_args(args: Mapping[str, Any]) -> str:
    return ", ".join(f"{key}={_value(value)}" for key, value in args.items())


def describe_call(call: ToolCall) -> str:
    """``tool(k=v, …)``, with the outcome: ``→ result`` or ``failed: ErrorClass``."""
    head = f"{call.tool}({describe_args(call.args)})"
    if call.error is not None:
        return f"{head} failed: {error_class(call.error)}"
    if call.result is not None:
        return f"{head} → {_value(call.result)}"
    return head


def _attempt_errors(attempt: Attempt) -> list[str]:
    """Error classes of an attempt, in order, without repeats."""
    found: dict[str, None] = {}
    for call in attempt.calls:
        if call.error is not None:
            found.setdefault(error_class(call.error), None)
    if attempt.error is not None:
        found.setdefault(error_class(attempt.error), None)
    return list(found)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def lesson_text(run: Run, verdict: Verdict) -> str:
    """e.g. ``Verified after 2 attempts. Failed: attempt 0 — LockHeldError. Worked: attempt 1.
    Checks: [refund-issued].``"""
    attempts = run.attempts or (Attempt(0),)
    last = attempts[-1]
    # the attempt that worked is not listed as failed: what it met on the way is said where it worked
    failed = [a for a in attempts if a.failed and not (verdict.passed and a is last)]
    head = "Verified" if verdict.passed else "Failed verification"
    parts = [f"{head} after {_plural(len(attempts), 'attempt')}."]
    if failed:
        listed = "; ".join(f"attempt {a.index} — {', '.join(_attempt_errors(a)) or 'Error'}" for a in failed)
        parts.append(f"Failed: {listed}.")
    if verdict.passed:
        met = ", ".join(_attempt_errors(last)) if last.failed else ""
        parts.append(f"Worked: attempt {last.index}" + (f", past {met}." if met else "."))
        parts.append(f"Checks: [{', '.join(verdict.checks)}].")
    else:
        parts.append(f"Checks failed: [{', '.join(verdict.failures)}].")
    return " ".join(parts)


def _summary(run: Run, verdict: Verdict) -> str:
    attempts = run.attempts or (Attempt(0),)
    worked = [describe_call(c) for c in attempts[-1].calls if c.ok] if verdict.passed else []
    failed = [describe_call(c) for a in attempts for c in a.calls if not c.ok]
    parts = []
    if failed:
        parts.append("What failed: " + "; ".join(failed) + ".")
    if worked:
        parts.append("What worked: " + "; ".join(worked) + ".")
    return " ".join(parts)


def capped(items: tuple[str, ...], limit: int = MAX_ITEMS) -> tuple[str, ...]:
    """``items`` within ``limit``: past it, the first ``limit - 1`` and a last one that counts the rest, so
    that a record always reads back and imports (a run of 100 checks is still verified by them)."""
    return items if len(items) <= limit else (*items[: limit - 1], more_items(len(items) - limit + 1))


def within(environment: Mapping[str, str], limit: int = MAX_ITEMS) -> dict[str, str]:
    """The first ``limit`` entries of an environment."""
    return dict(environment) if len(environment) <= limit else dict(list(environment.items())[:limit])


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def distill(run: Run, verdict: Verdict, now: datetime, *, skill: Skill | None = None) -> Experience:
    """The Experience for a verified (Validated) or failed (Quarantined) run."""
    attempts = run.attempts or (Attempt(0),)
    tried = tuple(
        Tried(attempt.index, call.tool, error_class(call.error), dict(call.args))
        for attempt in attempts
        for call in attempt.calls
        if call.error is not None
    )
    errors = [c.error for a in attempts for c in a.calls if c.error] + [a.error for a in attempts if a.error]
    symptoms = capped(tuple(dict.fromkeys(e[:_SYMPTOM_LIMIT] for e in errors)))
    signature = " | ".join(dict.fromkeys(error_class(e) for e in errors))
    last = attempts[-1]
    solution = Solution(
        tried=tried,
        worked=f"attempt {last.index}" if verdict.passed else "",
        steps=capped(tuple(describe_call(c) for c in last.calls if c.ok)) if verdict.passed else (),
    )
    supporting, contradicting = (1, 0) if verdict.passed else (0, 1)
    return Experience(
        id=experience_id(run.id, run.scope),
        task_id=run.id,
        task=run.task,
        lesson=_bounded(lesson_text(run, verdict)),
        status=Status.VALIDATED if verdict.passed else Status.QUARANTINED,
        confidence=confidence(supporting, contradicting),
        scope=run.scope,
        created_at=run.ended_at or now,
        summary=_bounded(_summary(run, verdict)),
        scenario=Scenario(
            task=run.task, environment=within(run.env), symptoms=symptoms, failure_signature=_bounded(signature)
        ),
        solution=solution,
        skill=skill,
        checks=capped(verdict.checks if verdict.passed else verdict.failures),
        supporting=supporting,
        contradicting=contradicting,
        source="run",
    )
