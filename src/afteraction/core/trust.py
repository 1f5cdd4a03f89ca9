"""Trust: Laplace confidence over independent evidence, the lifecycle it drives, which runs are
evidence about a lesson, and the wordings a lesson learns from the verified runs it was given to."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import replace
from datetime import datetime

from afteraction.core.text import search_stems
from afteraction.model import Experience, Scope, Status, _check

__all__ = [
    "REINFORCED_AT",
    "STICKY",
    "applied",
    "confidence",
    "outcome_digest",
    "outcome_key",
    "record_outcome",
    "run_digest",
    "with_wording",
    "wording_may_join",
    "worked_steps",
]

#: Supporting evidence at which an uncontested lesson becomes Reinforced.
REINFORCED_AT = 3
#: Statuses that outcomes never change: a person or a newer lesson decided.
STICKY = frozenset({Status.REVOKED, Status.SUPERSEDED, Status.QUARANTINED, Status.CANDIDATE})


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
    status = experience.status
    if status not in STICKY:
        if f > 0 and confidence(s, f) < 0.5:
            status = Status.CONTESTED
        elif s >= REINFORCED_AT and f == 0:
            status = Status.REINFORCED
        else:
            status = Status.VALIDATED
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
