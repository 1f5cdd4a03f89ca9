"""The learning loop's bookkeeping in ``core.trust``: what a lesson no run verified may become, whose
outcome a run's key stands for, and which wordings a lesson keeps."""

from __future__ import annotations

import pytest

from afteraction.core.trust import (
    decision,
    former_outcome_key,
    outcome_digest,
    outcome_key,
    record_outcome,
    set_status,
    with_wording,
)
from afteraction.errors import ValidationError
from afteraction.model import Scope, Status
from afteraction.testing import make_experience
from tests.builders import ACME, T0

ALICE = Scope("acme", "support", "refunds", user="alice")
BOB = Scope("acme", "support", "refunds", user="bob")


@pytest.mark.parametrize("status", [Status.QUARANTINED, Status.CANDIDATE])
@pytest.mark.parametrize("wanted", [Status.STALE, Status.REVOKED, Status.SUPERSEDED, Status.VALIDATED])
def test_a_person_cannot_move_a_lesson_no_run_verified(status: Status, wanted: Status) -> None:
    """Stale then one success, or Revoked then Validated, made a lesson whose run failed its checks
    Validated, and it was injected."""
    e = make_experience("Payout batch 7 fails", scope=ACME, status=status, supporting=3, contradicting=1)
    with pytest.raises(ValidationError) as caught:
        set_status(e, wanted, T0, reason="check later")
    assert caught.value.field == "status"
    assert caught.value.rule.startswith(f"a {status.label} lesson (") and "to remove it, forget it" in caught.value.rule


@pytest.mark.parametrize("status", [Status.QUARANTINED, Status.CANDIDATE])
def test_no_outcome_counts_on_a_lesson_no_run_verified(status: Status) -> None:
    e = make_experience("Payout batch 9 fails", scope=ACME, status=status, supporting=0, contradicting=1)
    for success in (True, False):
        assert record_outcome(e, success, T0) is e
        assert record_outcome(e, success, T0, key="run:x") is e


def test_a_decision_of_the_wrong_kind_lists_only_the_decisions_a_person_makes() -> None:
    for status in (7, None, "contested", "gone"):
        with pytest.raises(ValidationError) as caught:
            decision(status, "")  # type: ignore[arg-type]
        assert caught.value.field == "status"
        assert caught.value.rule.startswith("must be revoked, superseded, stale or validated (to reinstate); got ")
        assert "candidate" not in caught.value.rule and "reinforced" not in caught.value.rule


def test_a_runs_key_holds_its_scope() -> None:
    """Two users whose hosts number their runs alike: the second run's outcome was dropped as a repeat."""
    assert outcome_key("conversation-1", ALICE) != outcome_key("conversation-1", BOB)
    lesson = make_experience("Refund stuck", scope=Scope("acme", "support", "refunds"))
    alice = record_outcome(lesson, True, T0, key=outcome_key("conversation-1", ALICE))
    bob = record_outcome(alice, False, T0, key=outcome_key("conversation-1", BOB))
    assert (bob.supporting, bob.contradicting) == (lesson.supporting + 1, 1)
    assert record_outcome(bob, False, T0, key=outcome_key("conversation-1", BOB)) is bob  # still once


def test_a_lesson_that_counted_a_run_under_its_former_key_counts_it_once() -> None:
    counted = record_outcome(make_experience("Refund stuck", scope=ACME), True, T0, key=former_outcome_key("r-2"))
    assert counted.outcome_keys == (outcome_digest("run:r-2"),)
    assert record_outcome(counted, False, T0, key=outcome_key("r-2", ACME)) is counted
    assert record_outcome(counted, False, T0, key=outcome_key("r-3", ACME)).contradicting == 1


def test_a_wording_that_differs_only_by_numbers_or_ids_is_not_new() -> None:
    """Three reuses worded "Refund ticket 97/98/99 is stuck in pending" pushed out the one paraphrase."""
    e = make_experience("Refund ticket 42 is stuck in pending", scope=ACME)
    learned = with_wording(e, "chargeback not processed, the payment is frozen for the client")
    for task in (
        "Refund ticket 97 is stuck in pending",
        "Refund ticket 98 is stuck in pending: A17f93c2",
        "refund ticket #99 stuck in pending, 3f9a2c1e77",
        # one new word ("yet") among 15: too little
        "the client payment for the refund ticket is frozen, chargeback stuck in pending, not processed yet",
    ):
        assert with_wording(learned, task) is learned, task
    assert with_wording(learned, "reimbursement hangs awaiting the lock").wordings[-1].startswith("reimbursement")
    assert with_wording(e, "Refund 7 is stuck in review").wordings == ("Refund 7 is stuck in review",)  # 1 of 5 new
