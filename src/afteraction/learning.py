"""A run recorded elsewhere, judged and learned from: ``Memory.learn``, and whether it stored anything.

A run's lesson id derives from the run, so finishing the same run twice stores one record: the
first. ``learn`` says which happened (``Learned.new``), so that the service can answer a second
verdict on a session with what is stored and that this verdict changed nothing, instead of
``201 Created`` as if it had been used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from afteraction import arguments
from afteraction.core.capture import clean_run, clean_skill
from afteraction.core.distill import distill
from afteraction.core.trust import UNVERIFIED
from afteraction.core.verify import Verifier
from afteraction.core.verify import verify as check_run
from afteraction.errors import ValidationError
from afteraction.feedback import MAX_GIVEN, feed_learned
from afteraction.model import Experience, Run, Skill, _check

if TYPE_CHECKING:
    from afteraction.memory import Memory

__all__ = ["Learned", "learn"]


@dataclass(frozen=True)
class Learned:
    """The stored lesson of a judged run (None without a verdict), and whether this call stored it
    (False: a finish of the same run had, and that record stays as it was)."""

    lesson: Experience | None
    new: bool = False


def learn(
    memory: Memory,
    run: Run,
    *,
    verify: Sequence[Verifier] = (),
    allow_args: Sequence[str] | None = None,
    skill: Skill | None = None,
    given: Sequence[str] = (),
) -> Learned:
    """``Memory.learn``, saying whether the lesson is new."""
    if not isinstance(run, Run):
        raise ValidationError("run", f"must be a Run, got {type(run).__name__}")
    given = _check.strings(given, "given", limit=MAX_GIVEN, item_limit=_check.MAX_ID)
    verify, skill = arguments.verifiers(verify), arguments.skill(skill)
    if run.state == "running":
        raise ValidationError("run.state", "is running: only a finished run can teach")
    allow = memory.allow_args if allow_args is None else arguments.allowed(allow_args)
    clean, problems = clean_run(run, allow=allow, limits=memory.limits)
    for problem in problems:
        memory.report(problem, "learn")
    verdict = check_run(clean, verify)
    if verdict is None:
        return Learned(None)
    fresh = distill(clean, verdict, memory.now(), skill=clean_skill(skill))
    stored = memory._store_finished(fresh)
    # judged before: the lessons it was given get the first verdict (outcomes count once per run, so only a
    # first finish cut short before its feedback adds anything), never this call's unused one
    passed = verdict.passed if stored is fresh else stored.status not in UNVERIFIED
    feed_learned(memory, given, clean, passed=passed, own=stored.id)
    return Learned(stored, new=stored is fresh)
