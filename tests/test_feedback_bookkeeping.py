"""The learning loop's bookkeeping through ``Memory``: a lesson whose run failed its checks stays out,
an outcome never writes a stale copy, and runs of two scopes under one id both count."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.testing import make_experience

PROJECT = aa.Scope(tenant="acme", app="support", project="refunds")
ALICE = aa.Scope(tenant="acme", app="support", project="refunds", user="alice")
BOB = aa.Scope(tenant="acme", app="support", project="refunds", user="bob")
TASK = "Refund ticket 42 is stuck in pending"


def teach(mem: aa.Memory, scope: aa.Scope = PROJECT) -> aa.Experience:
    with mem.run(TASK, scope=scope) as run:
        run.tool("run_refund_check", args={"strategy": "retry"}, error="LockHeldError: refund lock is held")
        run.next_attempt()
        run.tool("run_refund_check", args={"strategy": "wait-for-lock"}, result="issued")
        run.check("refund-issued", passed=True)
    assert run.experience is not None
    return run.experience


def reuse(mem: aa.Memory, task: str, *, passed: bool, scope: aa.Scope, run_id: str) -> aa.RunRecorder:
    with mem.run(task, scope=scope, run_id=run_id) as run:
        run.reference_block()
        run.tool("run_refund_check", args={"strategy": "wait-for-lock"}, result="issued" if passed else "failed")
        run.check("refund-issued", passed=passed)
    return run


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[aa.Memory]:
    with aa.Memory.open(str(tmp_path / "m.db"), embedder=None, allow_args=("strategy",)) as memory:
        yield memory


def test_a_lesson_whose_run_failed_its_checks_never_comes_back(mem: aa.Memory) -> None:
    """Stale then one success made it Validated and injected, as did Revoked then Validated."""
    task = "Payout batch 7 fails with quota exceeded"
    with mem.run(task, scope=PROJECT) as run:
        run.tool("payout", args={"strategy": "force"}, result="sent twice")
        run.check("payout-once", passed=False)
    failed = run.experience
    assert failed is not None and failed.status is aa.Status.QUARANTINED
    for status in ("stale", "revoked", "superseded", "validated"):
        with pytest.raises(aa.ValidationError, match=r"^status: a Quarantined lesson .* forget it$"):
            mem.set_status(failed.id, status, scope=PROJECT, reason="check later")
    for n in range(3):
        mem.record_outcome(failed.id, scope=PROJECT, success=True, key=f"q{n}")
    assert mem.get(failed.id, scope=PROJECT) == failed  # nothing counted, nothing written
    assert mem.reference_block(task, scope=PROJECT) == ""
    assert mem.forget(failed.id, scope=PROJECT)


def test_an_outcome_never_puts_back_a_lesson_replaced_under_its_id(tmp_path: Path) -> None:
    """Forgotten and added again (corrected) by another host, the lesson was back at revision 1, and a run
    given the old one wrote it over the correction when it finished."""
    path = str(tmp_path / "m.db")
    with (
        aa.Memory.open(path, embedder=None, allow_args=("strategy",)) as mine,
        aa.Memory.open(path, embedder=None) as other,
    ):
        lesson = teach(mine)
        with mine.run("refund for ticket 97 still pending", scope=PROJECT) as run:
            assert run.reference_block() and run.given == (lesson.id,)
            assert other.forget(lesson.id, scope=PROJECT)
            fixed = dataclasses.replace(lesson, lesson="CORRECTED: wait for the lock, then check once.", revision=1)
            assert other.add(fixed)
            run.tool("run_refund_check", args={"strategy": "wait-for-lock"}, result="issued")
            run.check("refund-issued", passed=True)
        now = other.get(lesson.id, scope=PROJECT)
        assert now.lesson == fixed.lesson and (now.supporting, now.revision) == (2, 2)  # counted on the correction


def test_runs_of_two_users_under_one_id_both_count(mem: aa.Memory) -> None:
    """Hosts that number runs per user: bob's failure was taken for alice's run again and dropped."""
    lesson = teach(mem)
    reuse(mem, "refund for ticket 97 still pending", passed=True, scope=ALICE, run_id="conversation-1")
    reuse(mem, "refund for ticket 98 still pending", passed=False, scope=BOB, run_id="conversation-1")
    now = mem.get(lesson.id, scope=PROJECT)
    assert (now.supporting, now.contradicting) == (2, 1)
    reuse(mem, "refund for ticket 98 still pending", passed=False, scope=BOB, run_id="conversation-1")  # again
    assert mem.get(lesson.id, scope=PROJECT) == now


def test_a_run_counted_under_its_former_key_counts_once(mem: aa.Memory) -> None:
    lesson = teach(mem)
    before = mem.record_outcome(lesson.id, scope=PROJECT, success=True, key="run:r-2")  # the key r-2 had
    reuse(mem, "refund for ticket 97 still pending", passed=False, scope=PROJECT, run_id="r-2")  # finished again
    assert mem.get(lesson.id, scope=PROJECT) == before


def test_an_import_leaves_a_lesson_room_for_updates() -> None:
    """Imported at the largest revision, a lesson could never take another outcome."""
    record = make_experience(TASK, scope=PROJECT).to_dict()
    top = aa.Experience.MAX_IMPORTED_REVISION
    assert aa.Experience.from_dict({**record, "revision": top}, strict=True).revision == top
    with pytest.raises(aa.ValidationError) as caught:
        aa.Experience.from_dict({**record, "revision": aa.Experience.MAX_REVISION}, strict=True)
    assert caught.value.field == "revision" and f"at most {top} in an import" in caught.value.rule
    stored = aa.Experience.from_dict({**record, "revision": aa.Experience.MAX_REVISION})  # a stored record reads
    assert stored.revision == aa.Experience.MAX_REVISION


def test_a_lesson_added_at_the_largest_revision_says_what_to_do(mem: aa.Memory) -> None:
    top = dataclasses.replace(teach(mem), id="imported-1", revision=aa.Experience.MAX_REVISION)
    assert mem.add(top)
    for change in (
        lambda: mem.record_outcome("imported-1", scope=PROJECT, success=True, key="k"),
        lambda: mem.set_status("imported-1", "stale", scope=PROJECT),
    ):
        with pytest.raises(aa.ValidationError, match="takes no more updates; export it, forget it, and import"):
            change()
    assert mem.get("imported-1", scope=PROJECT) == top
