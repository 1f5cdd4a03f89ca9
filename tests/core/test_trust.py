from __future__ import annotations

from datetime import timedelta

import pytest

from afteraction.core.distill import capped, distill
from afteraction.core.trust import (
    applied,
    confidence,
    former_outcome_key,
    outcome_digest,
    outcome_key,
    record_outcome,
    set_status,
    with_wording,
    wording_may_join,
)
from afteraction.core.verify import verify
from afteraction.errors import ValidationError
from afteraction.model import Experience, Scope, Solution, Status
from afteraction.testing import make_experience
from tests.builders import ACME, OTHER, T0, refund_run


def test_laplace_confidence() -> None:
    assert confidence(1, 0) == 2 / 3
    assert confidence(0, 0) == 0.5
    assert confidence(0, 1) == 1 / 3


def test_outcomes_reinforce_and_contest() -> None:
    e = make_experience("task", scope=ACME)
    for _ in range(2):
        e = record_outcome(e, True, T0)
    assert e.status is Status.REINFORCED and e.supporting == 3 and e.confidence == 4 / 5
    for _ in range(4):
        e = record_outcome(e, False, T0)
    assert e.status is Status.CONTESTED and e.confidence < 0.5
    assert e.updated_at == T0


def test_revoked_is_sticky() -> None:
    e = make_experience("task", scope=ACME, status=Status.REVOKED)
    assert record_outcome(e, True, T0).status is Status.REVOKED


@pytest.mark.parametrize("status", [Status.REVOKED, Status.SUPERSEDED, Status.STALE])
def test_a_person_takes_a_lesson_out_of_circulation_with_a_reason(status: Status) -> None:
    e = make_experience("task", scope=ACME, status=Status.REINFORCED, supporting=4)
    later = T0 + timedelta(days=1)
    decided = set_status(e, status.value.upper(), later, reason="deletes the cache of every tenant")
    assert decided.status is status and decided.status_reason == "deletes the cache of every tenant"
    assert decided.updated_at == later and decided.confidence == e.confidence and decided.supporting == 4
    assert decided.eligibility(later) == f"status is {status.label}: deletes the cache of every tenant"
    assert set_status(decided, status, later + timedelta(days=1), reason=decided.status_reason) is decided


def test_reinstating_gives_the_status_the_evidence_says() -> None:
    for supporting, contradicting, expected in [
        (1, 0, Status.VALIDATED),
        (3, 0, Status.REINFORCED),
        (1, 3, Status.CONTESTED),
    ]:
        e = make_experience(
            "task", scope=ACME, status=Status.REVOKED, supporting=supporting, contradicting=contradicting
        )
        back = set_status(e, "validated", T0, reason="checked again by ops")
        assert (back.status, back.status_reason) == (expected, "checked again by ops")
    fine = make_experience("task", scope=ACME, status=Status.REINFORCED, supporting=3)
    assert set_status(fine, Status.VALIDATED, T0) is fine  # nothing a person had decided: nothing to do


@pytest.mark.parametrize("status", [Status.QUARANTINED, Status.CANDIDATE])
def test_a_lesson_no_run_verified_is_never_reinstated(status: Status) -> None:
    e = make_experience("task", scope=ACME, status=status)
    with pytest.raises(ValidationError) as caught:
        set_status(e, Status.VALIDATED, T0)
    assert caught.value.field == "status" and "never verified" in caught.value.rule
    for other in (Status.REVOKED, Status.SUPERSEDED, Status.STALE):  # nor moved anywhere it could come back from
        with pytest.raises(ValidationError, match=f"a {status.label} lesson .* forget it"):
            set_status(e, other, T0, reason="why")


@pytest.mark.parametrize("status", ["reinforced", "contested", "quarantined", "candidate", "deleted"])
def test_statuses_the_evidence_or_a_check_decides_are_not_a_persons_to_set(status: str) -> None:
    with pytest.raises(ValidationError) as caught:
        set_status(make_experience("task", scope=ACME), status, T0)
    assert caught.value.field == "status"


def test_a_reason_past_its_limit_is_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        set_status(make_experience("task", scope=ACME), Status.STALE, T0, reason="x" * 501)
    assert caught.value.field == "reason" and "limit is 500" in caught.value.rule


def test_a_stale_lesson_is_revived_by_a_success_and_stays_stale_after_a_failure() -> None:
    stale = set_status(make_experience("task", scope=ACME, supporting=3), Status.STALE, T0, reason="before the upgrade")
    failed = record_outcome(stale, False, T0)
    assert (failed.status, failed.status_reason, failed.contradicting) == (Status.STALE, "before the upgrade", 1)
    for _ in range(2):  # 3 supports, 3 contradictions: confidence 0.5, still Stale
        failed = record_outcome(failed, False, T0)
    assert failed.status is Status.STALE
    assert record_outcome(failed, False, T0).status is Status.CONTESTED  # then the evidence speaks
    revived = record_outcome(stale, True, T0)
    assert (revived.status, revived.status_reason) == (Status.REINFORCED, "")


@pytest.mark.parametrize("status", [Status.REVOKED, Status.SUPERSEDED])
def test_outcomes_never_undo_a_revocation_or_a_supersession(status: Status) -> None:
    decided = set_status(make_experience("task", scope=ACME), status, T0, reason="why")
    assert record_outcome(decided, True, T0).status is status
    assert record_outcome(decided, True, T0).status_reason == "why"


def test_an_outcome_under_a_key_counts_once() -> None:
    e = make_experience("task", scope=ACME)
    once = record_outcome(e, True, T0, key="run:a")
    assert once.supporting == 2 and once.outcome_keys == (outcome_digest("run:a"),)
    assert "run:a" not in str(once.to_dict())  # who reported is not readable from the lesson
    assert record_outcome(once, True, T0, key="run:a") is once
    assert record_outcome(once, False, T0, key="run:a") is once
    other = record_outcome(once, False, T0, key="run:b")
    assert (other.supporting, other.contradicting) == (2, 1)
    assert other.outcome_keys == (outcome_digest("run:a"), outcome_digest("run:b"))
    assert record_outcome(record_outcome(e, True, T0), True, T0).supporting == 3  # unkeyed: each counts


def test_outcome_keys_keep_the_newest() -> None:
    e = make_experience("task", scope=ACME)
    for n in range(Experience.MAX_OUTCOME_KEYS + 5):
        e = record_outcome(e, True, T0, key=f"run:{n}")
    assert len(e.outcome_keys) == Experience.MAX_OUTCOME_KEYS
    assert e.outcome_keys[0] == outcome_digest("run:5")
    assert e.outcome_keys[-1] == outcome_digest(f"run:{Experience.MAX_OUTCOME_KEYS + 4}")
    assert e.supporting == 1 + Experience.MAX_OUTCOME_KEYS + 5


def test_a_wording_is_kept_when_it_brings_a_new_word() -> None:
    e = make_experience("Deploys time out on the staging cluster", scope=ACME)
    assert with_wording(e, "the deploy timed out on staging") is e  # the same stems: nothing new
    assert with_wording(e, "   ") is e
    learned = with_wording(e, "  rollout   hangs\non the   staging cluster ")
    assert learned.wordings == ("rollout hangs on the staging cluster",)
    assert with_wording(learned, "rollouts hanging on staging") is learned  # known through the first wording
    long = with_wording(e, "rollout " * 100)
    assert len(long.wordings[0]) <= Experience.WORDING_CHARS


def test_wordings_keep_the_newest() -> None:
    e = make_experience("task", scope=ACME)
    for word in ("alpha", "bravo", "charlie", "delta", "echo"):
        e = with_wording(e, f"{word} request")
    assert e.wordings == ("charlie request", "delta request", "echo request")
    assert len(e.wordings) == Experience.MAX_WORDINGS


@pytest.mark.parametrize(
    ("lesson", "run", "joins"),
    [
        (ACME, ACME, True),
        (Scope("acme", "support", "refunds", agent="a"), Scope("acme", "support", "refunds", agent="a"), True),
        # the lesson is narrower than the run: whoever sees it could see the run's records
        (Scope("acme", "support", "refunds", user="u1"), ACME, True),
        # a user's request would reach every user of the project: no
        (ACME, Scope("acme", "support", "refunds", user="u1"), False),
        (ACME, Scope("acme", "support", "refunds", agent="a"), False),
        (ACME, OTHER, False),
    ],
)
def test_a_wording_joins_only_a_lesson_no_wider_than_its_run(lesson: Scope, run: Scope, joins: bool) -> None:
    assert wording_may_join(lesson, run) is joins


def test_a_run_applied_a_lesson_when_it_called_every_tool_of_its_fix() -> None:
    run = refund_run()
    lesson = distill(run, verify(run), T0)
    assert applied(lesson, {"run_refund_check", "notify"}) and not applied(lesson, {"notify"})
    steps = ("raise_probe_timeout() → ok", "deploy(env=x)", "search (web)(q=[omitted]) → 3 results")
    three = make_experience("deploy", scope=ACME, solution=Solution(steps=steps))
    assert applied(three, ["deploy", "raise_probe_timeout", "search (web)"])
    assert not applied(three, ["deploy", "raise_probe_timeout", "search"])  # another tool
    assert not applied(three, ["deploy_all", "raise_probe_timeout", "search (web)"])  # a longer name is another tool
    assert not applied(make_experience("no steps", scope=ACME), ["deploy"])  # nothing to apply: no evidence


def test_a_lesson_whose_steps_were_capped_is_applied_by_a_run_that_called_their_tools() -> None:
    """Past 64 steps the last one counts the rest ("… and 7 more") and names no tool: no run ever
    applied such a lesson, so it could never be Reinforced or Contested through use."""
    steps = capped(tuple(f"step_{n}() → ok" for n in range(70)))
    assert steps[-1] == "… and 7 more"
    lesson = make_experience("many", scope=ACME, solution=Solution(steps=steps))
    assert applied(lesson, [f"step_{n}" for n in range(70)])
    assert not applied(lesson, [f"step_{n}" for n in range(62)])  # a shown step's tool was not called
    assert not applied(make_experience("only", scope=ACME, solution=Solution(steps=("… and 3 more",))), ["x"])


def test_runs_with_long_ids_alike_at_the_start_have_keys_of_their_own() -> None:
    """Cut at the key's length, two run ids of 256 characters that differ at the end shared one key:
    the second run's verdict was taken for a repeat and dropped."""
    first, second = "r" * 252 + "aaaa", "r" * 252 + "bbbb"
    assert outcome_key(first, ACME) != outcome_key(second, ACME)
    assert former_outcome_key(first) != former_outcome_key(second)
    assert all(len(key) <= 256 for run in (first, second) for key in (outcome_key(run, ACME), former_outcome_key(run)))
    assert former_outcome_key("run-7") == "run:run-7"  # a short id kept its readable key
    lesson = make_experience("x", scope=ACME)
    once = record_outcome(lesson, False, T0, key=outcome_key(first, ACME))
    twice = record_outcome(once, False, T0, key=outcome_key(second, ACME))
    assert (twice.supporting, twice.contradicting) == (lesson.supporting, lesson.contradicting + 2)
