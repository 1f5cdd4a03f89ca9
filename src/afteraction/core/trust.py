"""Trust: Laplace confidence over independent evidence, the lifecycle it drives (and the statuses a
person sets over it), which runs are evidence about a lesson, and the wordings a lesson learns from
the verified runs it was given to."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from dataclasses import replace
from datetime import datetime

from afteraction.core.ids import experience_id
from afteraction.core.text import stem, tokenize
from afteraction.errors import ValidationError
from afteraction.model import Experience, Scope, Status, _check

__all__ = [
    "PERSON_SET",
    "REINFORCED_AT",
    "STICKY",
    "UNVERIFIED",
    "WORDING_NEW_SHARE",
    "WORDING_NEW_WORDS",
    "applied",
    "confidence",
    "decision",
    "former_outcome_key",
    "outcome_digest",
    "outcome_key",
    "record_outcome",
    "run_digests",
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
#: Statuses of a lesson no verified run taught (its run failed its checks, or none verified it yet): no outcome
#: counts on it and no person changes its status, so nothing can make it eligible; ``forget`` removes it.
UNVERIFIED = frozenset({Status.QUARANTINED, Status.CANDIDATE})
#: Why an UNVERIFIED lesson keeps its status, by status.
_NEVER_VERIFIED = {
    Status.QUARANTINED: "its run failed its checks",
    Status.CANDIDATE: "no run has verified it",
}


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


def outcome_key(run_id: str, scope: Scope) -> str:
    """The key under which run ``run_id`` of ``scope`` counts once on a lesson: the id of the run's own
    lesson (``core.ids.experience_id``, scope and run id: two users or agents whose hosts number
    their runs alike keep outcomes of their own), then the digest of the run's former key
    (``former_outcome_key``), so that a lesson counted under that one counts the run once still."""
    return f"run@{experience_id(run_id, scope)}:{outcome_digest(former_outcome_key(run_id))}"


def former_outcome_key(run_id: str) -> str:
    """A run's outcome key before it held the scope (``run:<run id>``; a run id too long for a key
    through its digest). Lessons counted under it keep it among their newest 64 keys."""
    key = f"run:{run_id}"
    if len(key) <= _check.MAX_ID:
        return key
    return f"run-sha256:{hashlib.sha256(run_id.encode('utf-8', 'surrogatepass')).hexdigest()}"


def run_digests(run_id: str, scope: Scope) -> tuple[str, str]:
    """What a lesson keeps in ``outcome_keys`` when run ``run_id`` of ``scope`` reported to it:
    the digest of its key, or of its former key (a lesson counted before the key held the scope)."""
    return outcome_digest(outcome_key(run_id, scope)), outcome_digest(former_outcome_key(run_id))


def outcome_digest(key: str) -> str:
    """What a lesson remembers of an outcome's key: a digest, so that the runs that reported to a
    lesson (a user's run id, say) are not readable by everyone who reads the lesson."""
    return "k" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]


def record_outcome(experience: Experience, success: bool, now: datetime, *, key: str | None = None) -> Experience:
    """The experience after one more independent reuse outcome (not yet stored). With ``key``
    (the outcome's own identity, e.g. the run it came from: ``outcome_key``) an outcome already
    counted, under that key or a run's former one, is not counted again: the experience itself is
    returned, and there is nothing to store. Nor is any outcome counted on an UNVERIFIED lesson."""
    if experience.status in UNVERIFIED:
        return experience
    digest = None if key is None else outcome_digest(key)
    if digest is not None and not set(_digests(key, digest)).isdisjoint(experience.outcome_keys):
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


#: A run's key (``outcome_key``): its own lesson's id, then the digest of its former key.
_RUN_KEY = re.compile(r"run@exp_[0-9a-f]{24}:(k[0-9a-f]{24})")


def _digests(key: str | None, digest: str) -> tuple[str, ...]:
    """The digests under which the outcome of ``key`` (its digest ``digest``) may have been counted."""
    former = None if key is None else _RUN_KEY.fullmatch(key)
    return (digest,) if former is None else (digest, former.group(1))


def _by_evidence(supporting: int, contradicting: int) -> Status:
    """The status the evidence gives a lesson no person or failed check holds back."""
    if contradicting > 0 and confidence(supporting, contradicting) < 0.5:
        return Status.CONTESTED
    if supporting >= REINFORCED_AT and contradicting == 0:
        return Status.REINFORCED
    return Status.VALIDATED


def decision(status: Status | str, reason: str) -> tuple[Status, str]:
    """A person's decision as ``set_status`` takes it, checked: ValidationError naming ``status`` or
    ``reason`` when it is not one a person may make (listing those a person may), or the reason is
    too long."""
    wanted = status if isinstance(status, Status) else _status(status)
    if wanted not in PERSON_SET and wanted is not Status.VALIDATED:
        raise ValidationError("status", f"{_DECISIONS}; got {wanted.value!r}")
    return wanted, _check.text(reason, "reason", limit=Experience.REASON_CHARS, blank=True)


#: What a person may decide, as an error names it.
_DECISIONS = "must be revoked, superseded, stale or validated (to reinstate)"


def _status(value: object) -> Status:
    """``Status.parse`` of a person's decision, whose error lists only the statuses a person sets."""
    if isinstance(value, str):
        try:
            return Status(value.strip().lower())
        except ValueError:
            pass
        raise ValidationError("status", f"{_DECISIONS}; got {value[:40]!r}")
    raise ValidationError("status", f"{_DECISIONS}; got {type(value).__name__} {str(value)[:40]!r}")


def set_status(experience: Experience, status: Status | str, now: datetime, *, reason: str = "") -> Experience:
    """The experience after a person's decision (not yet stored): Revoked (wrong or harmful), Superseded
    (a newer lesson replaces it) or Stale (may no longer hold: a success verifies it again), none of them
    ever injected; or Validated, which reinstates it: its status follows its evidence again (Reinforced
    or Contested when that says so). The status of a lesson no verified run taught (UNVERIFIED: its run
    failed its checks, or none verified it yet) is not a person's to change: from Revoked or Stale it
    would come back by a reinstatement or a success. The experience itself when nothing changes."""
    wanted, reason = decision(status, reason)
    if experience.status in UNVERIFIED:
        label = experience.status.label
        raise ValidationError(
            "status",
            f"a {label} lesson ({_NEVER_VERIFIED[experience.status]}) was never verified by a run and keeps "
            f"its status; to remove it, forget it",
        )
    if wanted is Status.VALIDATED:
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


#: A wording is kept when this many of its words are new to the lesson, or one is and makes ``WORDING_NEW_SHARE``
#: of its words (measured: a quarter instead dropped 27 of bench_wordings.py's 196 wordings, held-out 2's R@1
#: 0.76 -> 0.73; a wording in the same stems but other forms still moves the lesson's vector).
WORDING_NEW_WORDS = 2
WORDING_NEW_SHARE = 1 / 10


def with_wording(experience: Experience, task: str) -> Experience:
    """The experience that is also found by ``task`` (a verified run's task, already sanitized):
    kept when it brings words (stems) the lesson is not yet found by (``WORDING_NEW_WORDS``, or
    one that is ``WORDING_NEW_SHARE`` of its words), cut at ``WORDING_CHARS``, the oldest wording
    leaving past ``MAX_WORDINGS``. Numbers and id-like tokens (a ticket number, a hash, an order id:
    any token with a digit) are no words here: runs that differ from the lesson only by them pushed
    out the wordings that say it otherwise. The same experience when it brings too little."""
    wording = " ".join(task.split())[: Experience.WORDING_CHARS].strip()
    words = _words(wording)
    new = len(words - _words(" ".join((experience.task, *experience.wordings))))
    if new < WORDING_NEW_WORDS and (not new or new < WORDING_NEW_SHARE * len(words)):
        return experience
    return replace(experience, wordings=(*experience.wordings, wording)[-Experience.MAX_WORDINGS :])


def _words(text: str) -> frozenset[str]:
    """The stems of the tokens of ``text`` that hold no digit."""
    return frozenset(stem(token) for token in tokenize(text) if not any(char.isdigit() for char in token))
