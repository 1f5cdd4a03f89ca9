"""Feedback: reuse outcomes, and a finished run's verdict reaching the lessons it was given.

``count_outcome`` is ``Memory.record_outcome``: one more independent outcome for a lesson, once
per key, with a success's wording (``core.trust``), stored under the revision check.

A run that was given lessons (a recorder's ``reference_block()`` / ``search()``, or the ids a
host passes with a run it submits) reports its verdict to each whose fix it applied (it called
every tool of the lesson's worked steps: ``core.trust.applied``) when it has one: one reuse
outcome per lesson (``Memory.record_outcome``), keyed by the run and its scope (``outcome_key``)
so that the same run finished, resubmitted or retried counts once while another user's or agent's
run of the same id counts too, and, for a verified run, its task as a wording the lesson is found
by. Never the run's own lesson (a retried run may be given the lesson its first finish stored):
that is not independent evidence. A block shows the copies
of one fix once (``core.render``): a run that applied the shown one and failed counts as a
failure of each copy too, or the failures of a fix that stopped working would go to one copy
after another, each its best at the time, and keep the fix in blocks about three times as long
as its evidence says; a success counts for the shown one alone, where the evidence gathers.
Each failure goes to ``report`` and the next lesson is tried; nothing raises.

``change_status`` is ``Memory.set_status``: a person's decision about a lesson (``core.trust.set_status``),
stored under the same revision check. Deleting lessons is ``afteraction.forgetting``'s.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from afteraction.core.capture import clean_task
from afteraction.core.trust import (
    applied,
    decision,
    outcome_key,
    record_outcome,
    set_status,
    with_wording,
    wording_may_join,
)
from afteraction.errors import ConflictError, ValidationError
from afteraction.model import Experience, Run, Scope, Status, _check

if TYPE_CHECKING:
    from afteraction.memory import Memory

__all__ = [
    "MAX_BACKOFF",
    "MAX_GIVEN",
    "OUTCOME_ATTEMPTS",
    "change_status",
    "count_outcome",
    "feed_back",
    "feed_learned",
    "given_copies",
    "outcome_key",
]

#: Lessons one run may report to (a block holds at most 100).
MAX_GIVEN = 100
#: Outcomes commute, so one that lost a race to another writer is tried again (``Memory.record_outcome``'s
#: ``attempts``), after a random pause that doubles each time up to this many seconds.
MAX_BACKOFF = 0.05
#: ``Memory.record_outcome``'s default attempts.
OUTCOME_ATTEMPTS = 30


def count_outcome(
    memory: Memory,
    id: str,
    *,
    scope: Scope,
    success: bool,
    key: str | None,
    task: str | None,
    attempts: int,
    known: Experience | None = None,
) -> Experience:
    """``Memory.record_outcome``: the lesson after one more outcome, retried when another writer
    got there first; the lesson as it is when ``key`` was counted already. Each try reads what is
    stored now and writes over that revision. ``known`` (the lesson as the caller's search returned
    it) must be lesson ``id`` and is not written from: the lesson may have been forgotten and added
    again under its id since (a correction, an import), at the revision the copy holds, and an
    outcome written from the copy would put the old lesson back over it. The read costs about a
    third of an outcome, once per lesson a run applied, when the run ends (never in a search)."""
    if not isinstance(success, bool):
        raise ValidationError("success", "must be true or false")
    if known is not None and (
        not isinstance(known, Experience) or (known.scope.tenant, known.id) != (scope.tenant, id)
    ):
        raise ValidationError("known", f"must be lesson {id!r} of tenant {scope.tenant!r} as a search returned it")
    key = None if key is None else _check.name(key, "key", limit=_check.MAX_ID)
    if task is not None and not isinstance(task, str):
        raise ValidationError("task", f"must be a string, got {type(task).__name__}")
    wording = clean_task(task, memory.limits) if task and success else None
    for attempt in range(attempts):
        if attempt:
            _pause(attempt)
        current = memory.get(id, scope=scope)
        updated = record_outcome(current, success, memory.now(), key=key)
        if updated is current:
            return current  # counted already, or a lesson no outcome counts on
        if wording and wording_may_join(current.scope, scope):
            updated = with_wording(updated, wording)
        if (stored := _stored(memory, updated, current.revision)) is not None:
            return stored
    raise _gave_up(id, attempts)


def change_status(
    memory: Memory, id: str, status: Status | str, *, scope: Scope, reason: str, attempts: int
) -> Experience:
    """``Memory.set_status``: the lesson after a person's decision, stored; retried when another
    writer got there first (an outcome counted meanwhile is kept: the decision applies to what is
    stored). The reason is scrubbed as a task is. Nothing is written when nothing changes."""
    status, reason = decision(status, reason)  # checked before the lesson is read: bad input is named first
    reason = clean_task(reason, memory.limits)[: Experience.REASON_CHARS] if reason.strip() else ""
    for attempt in range(attempts):
        if attempt:
            _pause(attempt)
        current = memory.get(id, scope=scope)
        updated = set_status(current, status, memory.now(), reason=reason)
        if updated is current:
            return current
        if (stored := _stored(memory, updated, current.revision)) is not None:
            return stored
    raise _gave_up(id, attempts)


def _stored(memory: Memory, updated: Experience, revision: int) -> Experience | None:
    """``updated`` stored over ``revision`` and queued for indexing; None when another writer got there first."""
    if revision >= Experience.MAX_REVISION:  # added whole at the largest revision (``Memory.add``; imports refuse it)
        raise ValidationError(
            "revision",
            f"lesson {updated.id!r} is at the largest revision ({revision}) and takes no more updates; "
            f"export it, forget it, and import it with a lower revision",
        )
    try:
        stored = memory.store.update(updated, expected_revision=revision)
    except ConflictError:
        return None
    memory._index([stored])
    return stored


def _gave_up(id: str, attempts: int) -> ConflictError:
    return ConflictError(f"lesson {id!r} kept changing; gave up after {attempts} tries")


def _pause(attempt: int) -> None:
    """A random pause before try ``attempt`` that doubles each time: spreads racing writers out."""
    time.sleep(random.uniform(0.5, 1.5) * min(MAX_BACKOFF, 0.001 * 2**attempt))


def feed_back(
    memory: Memory,
    given: Mapping[str, Experience | None],
    run: Run,
    *,
    passed: bool,
    own: str | None,
    report: Callable[[BaseException, str], None],
    copies: Mapping[str, Sequence[Experience]] | None = None,
) -> int:
    """The verdict (``passed``) of ``run`` (sanitized) as one reuse outcome of each lesson in
    ``given`` but ``own`` whose fix it applied (``core.trust.applied``); how many were recorded
    (see the module). ``given`` maps each lesson's id to the lesson as the run's search returned
    it, when the run has it (``count_outcome``'s ``known``), else None: then it is read first.
    ``copies``: for a lesson a block showed for a group, the copies of its fix it stood for; a
    failure of a run that applied the fix is one against each of them too (see the module)."""
    run_id, scope, task = run.id, run.scope, run.task
    tools = {call.tool for call in run.calls}
    key, recorded = outcome_key(run_id, scope), 0
    for id, known in given.items():
        if id == own:
            continue
        try:
            lesson = known if known is not None else memory.get(id, scope=scope)
            if not applied(lesson, tools):
                continue  # the run did not try the lesson's fix: its verdict says nothing of it
            memory.record_outcome(id, scope=scope, success=passed, key=key, task=task if passed else None, known=lesson)
        except Exception as exc:
            report(exc, "run.feedback")
            continue
        recorded += 1
        if not passed:
            recorded += _against_copies(
                (copies or {}).get(id, ()), memory, scope, key, tools, skip={own, *given}, report=report
            )
    return recorded


def feed_learned(memory: Memory, given: Sequence[str], run: Run, *, passed: bool, own: str) -> int:
    """``Memory.learn``'s feedback: ``feed_back`` to the lessons the run names, a failure also
    against the copies each stood for (``given_copies``)."""
    copies = None if passed or not given else given_copies(memory, given, run)
    return feed_back(memory, dict.fromkeys(given), run, passed=passed, own=own, report=memory.report, copies=copies)


def given_copies(memory: Memory, given: Sequence[str], run: Run) -> dict[str, tuple[Experience, ...]]:
    """For a run that names the lessons it was given (``Memory.learn(given=…)``, a block fetched over
    HTTP) and failed: the copies of each one's fix that the block for the run's task stands for now,
    as a recorded run keeps them from its own block (the host's block is not at hand). Nothing when
    that block cannot be read (reported)."""
    try:
        _, shown, copies = memory._block(run.task, run.scope, run.env, memory.block_options)
    except Exception as exc:
        memory.report(exc, "run.feedback")
        return {}
    wanted = set(given)
    return {hit.id: group for hit, group in zip(shown, copies, strict=True) if hit.id in wanted and group}


def _against_copies(
    copies: Sequence[Experience],
    memory: Memory,
    scope: Scope,
    key: str,
    tools: set[str],
    *,
    skip: set[str | None],
    report: Callable[[BaseException, str], None],
) -> int:
    """A failure against each copy of a failed fix (read from the store: ``known`` is only a search's hit)."""
    counted = 0
    for copy in copies:
        if copy.id in skip or not applied(copy, tools):
            continue
        try:
            memory.record_outcome(copy.id, scope=scope, success=False, key=key)
        except Exception as exc:
            report(exc, "run.feedback")
            continue
        counted += 1
    return counted
