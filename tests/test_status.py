"""A person's decisions about a lesson (``Memory.set_status``): revoked, superseded or stale lessons
leave search and blocks at once, with the reason kept; a reinstated one comes back as its evidence
says; outcomes counted meanwhile are not lost."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.testing import FixedClock, make_experience
from tests.test_feedback import PROJECT, TASK, teach


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[aa.Memory]:
    url = {"memory": ":memory:", "sqlite": str(tmp_path / "m.db")}.get(request.param)
    with aa.Memory.open(url or request.getfixturevalue("pg_url"), clock=FixedClock(), embedder=None) as memory:
        yield memory


@pytest.mark.parametrize("status", ["revoked", "superseded", "stale"])
def test_a_lesson_taken_back_leaves_search_and_blocks_at_once_and_says_why(mem: aa.Memory, status: str) -> None:
    lesson = teach(mem)
    assert mem.reference_block("staging deploys time out", scope=PROJECT) != ""
    decided = mem.set_status(lesson.id, status, scope=PROJECT, reason="raising the probe timeout hid a crash loop")
    assert decided.status is aa.Status.parse(status) and decided.revision == lesson.revision + 1
    assert mem.search("staging deploys time out", scope=PROJECT) == []
    assert mem.reference_block("staging deploys time out", scope=PROJECT) == ""
    [listed] = mem.lessons(scope=PROJECT)
    assert not listed.eligible
    assert listed.reason == f"status is {status.capitalize()}: raising the probe timeout hid a crash loop"
    assert mem.get(lesson.id, scope=PROJECT).status_reason == "raising the probe timeout hid a crash loop"
    # and back: reinstated, as its evidence says (one verified run: Validated)
    back = mem.set_status(lesson.id, "validated", scope=PROJECT, reason="the crash loop was another bug")
    assert back.status is aa.Status.VALIDATED and back.status_reason == "the crash loop was another bug"
    assert [hit.id for hit in mem.search("staging deploys time out", scope=PROJECT)] == [lesson.id]


def test_the_same_decision_twice_writes_nothing(mem: aa.Memory) -> None:
    lesson = teach(mem)
    once = mem.set_status(lesson.id, aa.Status.REVOKED, scope=PROJECT, reason="wrong")
    assert mem.set_status(lesson.id, "Revoked", scope=PROJECT, reason="wrong") == once  # same revision


def test_a_reason_is_scrubbed_of_secrets_before_it_is_stored(mem: aa.Memory) -> None:
    lesson = teach(mem)
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    decided = mem.set_status(lesson.id, "revoked", scope=PROJECT, reason=f"it printed the token {secret}")
    assert secret not in decided.status_reason and secret not in repr(mem.get(lesson.id, scope=PROJECT))
    assert decided.status_reason.startswith("it printed the token")


def test_bad_decisions_name_what_is_wrong_and_change_nothing(mem: aa.Memory) -> None:
    lesson = teach(mem)
    cases = [
        ({"status": "reinforced"}, "status"),
        ({"status": "gone"}, "status"),
        ({"status": "stale", "reason": 7}, "reason"),
        ({"status": "stale", "attempts": 0}, "attempts"),
    ]
    for kwargs, field in cases:
        with pytest.raises(aa.ValidationError) as info:
            mem.set_status(lesson.id, scope=PROJECT, **kwargs)  # type: ignore[arg-type]
        assert info.value.field == field, kwargs
    with pytest.raises(aa.NotFoundError):
        mem.set_status("exp_nothing", "revoked", scope=PROJECT)
    with pytest.raises(aa.NotFoundError):  # a scope that does not see it cannot decide about it
        mem.set_status(lesson.id, "revoked", scope=aa.Scope(tenant="globex", app="ops", project="deploys"))
    assert mem.get(lesson.id, scope=PROJECT) == lesson


def test_a_quarantined_lesson_is_never_reinstated(mem: aa.Memory) -> None:
    with mem.run("Refund job fails", scope=PROJECT) as run:
        run.tool("refund", error="LockHeldError")
        run.check("refunded", passed=False)
    assert run.experience is not None and run.experience.status is aa.Status.QUARANTINED
    with pytest.raises(aa.ValidationError) as info:
        mem.set_status(run.experience.id, "validated", scope=PROJECT)
    assert info.value.field == "status"
    assert mem.get(run.experience.id, scope=PROJECT).status is aa.Status.QUARANTINED


def test_a_stale_lesson_comes_back_when_a_run_verifies_it_again(mem: aa.Memory) -> None:
    lesson = teach(mem)
    mem.set_status(lesson.id, "stale", scope=PROJECT, reason="before the cluster upgrade")
    mem.record_outcome(lesson.id, scope=PROJECT, success=False, key="run:failed-elsewhere")
    assert mem.get(lesson.id, scope=PROJECT).status is aa.Status.STALE  # a failure does not revive it
    revived = mem.record_outcome(lesson.id, scope=PROJECT, success=True, key="run:verified")
    assert (revived.status, revived.status_reason) == (aa.Status.VALIDATED, "")


def test_a_decision_racing_outcomes_loses_neither(mem: aa.Memory) -> None:
    """An operator revokes a lesson while runs all over the fleet report to it: the decision holds
    and every outcome is counted (each write retries on the revision check)."""
    lesson = teach(mem)
    failures: list[BaseException] = []

    def report(n: int) -> None:
        try:
            for i in range(3):
                mem.record_outcome(lesson.id, scope=PROJECT, success=True, key=f"run:{n}-{i}")
        except BaseException as exc:  # handed to the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=report, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    mem.set_status(lesson.id, "revoked", scope=PROJECT, reason="unsafe")
    for thread in threads:
        thread.join()
    assert failures == []
    final = mem.get(lesson.id, scope=PROJECT)
    assert (final.status, final.status_reason, final.supporting) == (aa.Status.REVOKED, "unsafe", 1 + 8 * 3)


def test_an_imported_reason_is_scrubbed_and_round_trips_through_export(mem: aa.Memory) -> None:
    secret = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    record = make_experience(TASK, scope=PROJECT, status=aa.Status.REVOKED, status_reason=f"key {secret} in args")
    assert mem.add(record)
    [exported] = [e for e in mem.export() if e.id == record.id]
    assert exported.status_reason.startswith("key ") and secret not in exported.status_reason
    assert aa.Experience.from_dict(exported.to_dict()) == exported


def test_the_async_face_decides_too(tmp_path: Path) -> None:
    with aa.Memory.open(tmp_path / "m.db", clock=FixedClock(), embedder=None) as mem:
        lesson = teach(mem)
        decided = asyncio.run(mem.aio.set_status(lesson.id, "superseded", scope=PROJECT, reason="see exp_newer"))
    assert decided.status is aa.Status.SUPERSEDED and decided.status_reason == "see exp_newer"
