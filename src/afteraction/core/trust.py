"""Trust: Laplace confidence over independent evidence, the lifecycle it drives (and the statuses a
person sets over it), which runs are evidence about a lesson, and the wordings a lesson learns from
the verified runs it was given to."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import replace
from datetime import datetime

from afteraction.core.text import search_stems
from afteraction.errors import ValidationError
from afteraction.model import Experience, Scope, Status, _check

__all__ = [
    "PERSON_SET",
    "REINFORCED_AT",
    "STICKY",
    "applied",
    "confidence",
    "decision",
    "outcome_digest",
    "outcome_key",
    "record_outcome",
    "run_digest",
    "set_status",
    "with_wording",
    "wording_may_join",
    "worked_steps",
]

#: Supporting evidence at which an uncontested lesson becomes Reinforced.
REINFORCED_AT = 3
#: Statuses that outcomes never change: a person or a newer lesson decided, or no verified run taught it.
STICKY = frozenset({Status.REVOKED, Status.SUPERSEDED, Status.QUARANTINED, Status.CANDIDATE})
#: Statuses a person sets (``set_status``); Validated is the way back (reinstate).
PERSON_SET = frozenset({Status.REVOKED, Status.SUPERSEDED, Status.STALE})


def confidence(supporting: int, contradicting: int) -> float:
    """(1 + S) / (2 + S + F)."""
    return (1 + supporting) / (2 + supporting + contradicting)


def applied(lesson: Experience, tools: Collection[str]) -> bool:
    """Whether a run that called ``tools`` applied ``lesson``'s fix: it called the tool of every
    step that worked (``core.distill.describe_call`` wrote each as ``tool(args) …``, so a step
    is a tool's when it starts with the tool's name and "("; a name may itself hold one). Only
    such a run's verdict is evidence about the lesson: a run that failed without trying the fix
    says nothing against it (agents fail for many reasons: counted, a 30% rate of unrelated
    failures would bury about one good lesson in five for good), and one that passed without it
    says nothing for it. A lesson without steps is never applied."""
    steps = tuple(step for step in worked_steps(lesson) if not _check.MORE_ITEMS.fullmatch(step))  # names no tool
    calls = tuple(f"{tool}(" for tool in set(tools))
    return bool(steps) and all(step.startswith(calls) for step in steps)


def worked_steps(lesson: Experience) -> tuple[str, ...]:
    """The steps that worked in ``lesson`` (none for a lesson without a solution)."""
    return lesson.solution.steps if lesson.solution is not None else ()


def outcome_key(run_id: str) -> str:
    """The key under which run ``run_id``'s outcome is counted once (a run id too long for a key
    is kept whole through its digest: cut, two runs alike at the start would share one key)."""
    key = f"run:{run_id}"
    if len(key) <= _check.MAX_ID:
        return key
    return f"run-sha256:{hashlib.sha256(run_id.encode('utf-8', 'surrogatepass')).hexdigest()}"


def run_digest(run_id: str) -> str:
    """The digest a lesson keeps of run ``run_id``'s outcome in ``outcome_keys`` (the newest 64):
    whether that run reported to the lesson."""
    return outcome_digest(outcome_key(run_id))


def outcome_digest(key: str) -> str:
    """What a lesson remembers of an outcome's key: a digest, so that the runs that reported to a
    lesson (a user's run id, say) are not readable by everyone who reads the lesson."""
    return "k" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]


def record_outcome(experience: Experience, success: bool, now: datetime, *, key: str | None = None) -> Experience:
    """The experience after one more independent reuse outcome (not yet stored). With ``key``
    (the outcome's own identity, e.g. the run it came from) an outcome already counted is not
    counted again: the experience itself is returned, and there is nothing to store."""
    digest = None if key is None else outcome_digest(key)
    if digest is not None and digest in experience.outcome_keys:
        return experience
    s = experience.supporting + (1 if success else 0)
    f = experience.contradicting + (0 if success else 1)
    status, reason = experience.status, experience.status_reason
    if status not in STICKY and (success or status is not Status.STALE or _by_evidence(s, f) is Status.CONTESTED):
        # a Stale lesson is verified again by a success; a failure leaves it Stale, or Contested
        status = _by_evidence(s, f)
        reason = "" if experience.status is Status.STALE else reason  # the person's reason was for Stale
    keys = experience.outcome_keys
    if digest is not None:
        keys = (*keys, digest)[-Experience.MAX_OUTCOME_KEYS :]
    return replace(
        experience,
        supporting=s,
        contradicting=f,
        confidence=confidence(s, f),
        status=status,
        # never earlier than what is stored: a host whose clock runs behind must not age the lesson
        updated_at=max(now, experience.updated_at or experience.created_at),
        outcome_keys=keys,
        status_reason=reason,
    )


def _by_evidence(supporting: int, contradicting: int) -> Status:
    """The status the evidence gives a lesson no person or failed check holds back."""
    if contradicting > 0 and confidence(supporting, contradicting) < 0.5:
        return Status.CONTESTED
    if supporting >= REINFORCED_AT and contradicting == 0:
        return Status.REINFORCED
    return Status.VALIDATED


def decision(status: Status | str, reason: str) -> tuple[Status, str]:
    """A person's decision as ``set_status`` takes it, checked: ValidationError naming ``status`` or
    ``reason`` when it is not one a person may make, or the reason is too long."""
    wanted = Status.parse(status)
    if wanted not in PERSON_SET and wanted is not Status.VALIDATED:
        raise ValidationError(
            "status", f"must be revoked, superseded, stale or validated (to reinstate); got {wanted.value!r}"
        )
    return wanted, _check.text(reason, "reason", limit=Experience.REASON_CHARS, blank=True)


def set_status(experience: Experience, status: Status | str, now: datetime, *, reason: str = "") -> Experience:
    """The experience after a person's decision (not yet stored): Revoked (wrong or harmful), Superseded
    (a newer lesson replaces it) or Stale (may no longer hold: a success verifies it again), none of them
    ever injected; or Validated, which reinstates it: its status follows its evidence again (Reinforced
    or Contested when that says so). A lesson of a run that failed its checks (Quarantined) or not yet
    verified (Candidate) is never reinstated. The experience itself when nothing changes."""
    wanted, reason = decision(status, reason)
    if wanted is Status.VALIDATED:
        if experience.status in (Status.QUARANTINED, Status.CANDIDATE):
            raise ValidationError(
                "status", f"a {experience.status.label} lesson was never verified by a run; it cannot be reinstated"
            )
        if experience.status not in PERSON_SET and not reason:
            return experience  # already as its evidence says
        wanted = _by_evidence(experience.supporting, experience.contradicting)
    if wanted is experience.status and reason == experience.status_reason:
        return experience
    return replace(
        experience,
        status=wanted,
        status_reason=reason,
        updated_at=max(now, experience.updated_at or experience.created_at),
    )


def wording_may_join(lesson: Scope, run: Scope) -> bool:
    """Whether the task of a run in scope ``run`` may become a wording of a lesson in scope
    ``lesson`` (which ``run`` sees). Only when everyone who sees the lesson could see the run:
    each part the run's scope sets, the lesson's sets to the same value. A user's request never
    reaches the lessons the rest of the project reads."""
    return lesson.tenant == run.tenant and all(
        getattr(run, part) is None or getattr(lesson, part) == getattr(run, part)
        for part in (*Scope.REQUIRED, *Scope.OPTIONAL)
    )


def with_wording(experience: Experience, task: str) -> Experience:
    """The experience that is also found by ``task`` (a verified run's task, already sanitized):
    kept when it brings a word the lesson is not yet found by, cut at ``WORDING_CHARS``, the oldest
    wording leaving past ``MAX_WORDINGS``. The same experience when it brings nothing."""
    wording = " ".join(task.split())[: Experience.WORDING_CHARS].strip()
    known = set(search_stems([experience.task, *experience.wordings]))
    if not wording or set(search_stems([wording])) <= known:
        return experience
    return replace(experience, wordings=(*experience.wordings, wording)[-Experience.MAX_WORDINGS :])
