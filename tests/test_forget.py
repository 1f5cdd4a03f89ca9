"""Forgetting a lesson (``Memory.forget``): it is deleted with its search rows and vectors, gone from
search, blocks, listings and exports; forgetting again, or an id the scope does not see, is False.
Forgetting a user (``Memory.forget_user``): every lesson stored for them in a tenant goes, nothing else."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.testing import FixedClock
from tests.hybrid_doubles import Letters
from tests.test_feedback import PROJECT, TASK, teach


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[aa.Memory]:
    url = {"memory": ":memory:", "sqlite": str(tmp_path / "m.db")}.get(request.param)
    with aa.Memory.open(url or request.getfixturevalue("pg_url"), clock=FixedClock(), embedder=Letters()) as memory:
        yield memory


def test_a_forgotten_lesson_is_gone_from_search_blocks_listings_and_exports(mem: aa.Memory) -> None:
    lesson = teach(mem)
    assert mem.wait_indexed(10)
    assert [hit.id for hit in mem.search(TASK, scope=PROJECT)] == [lesson.id]
    assert mem.forget(lesson.id, scope=PROJECT) is True
    assert mem.search(TASK, scope=PROJECT) == []
    assert mem.reference_block(TASK, scope=PROJECT) == ""
    assert mem.lessons(scope=PROJECT) == [] and list(mem.export()) == []
    with pytest.raises(aa.NotFoundError):
        mem.get(lesson.id, scope=PROJECT)
    with pytest.raises(aa.NotFoundError):  # an outcome cannot bring it back
        mem.record_outcome(lesson.id, scope=PROJECT, success=True, key="run:late")
    assert mem.forget(lesson.id, scope=PROJECT) is False  # again: nothing to forget, no error


def test_a_scope_that_does_not_see_a_lesson_cannot_forget_it(mem: aa.Memory) -> None:
    lesson = teach(mem)
    for blind in (
        aa.Scope(tenant="globex", app="ops", project="deploys"),
        aa.Scope(tenant="acme", app="ops", project="x"),
    ):
        assert mem.forget(lesson.id, scope=blind) is False
    assert mem.forget("exp_nothing", scope=PROJECT) is False
    assert mem.forget("", scope=PROJECT) is False  # no lesson can have it
    assert mem.get(lesson.id, scope=PROJECT) == lesson


def test_bad_arguments_name_the_field(mem: aa.Memory) -> None:
    lesson = teach(mem)
    with pytest.raises(aa.ValidationError) as info:
        mem.forget(7, scope=PROJECT)  # type: ignore[arg-type]
    assert info.value.field == "id"
    with pytest.raises(aa.ValidationError) as info:
        mem.forget(lesson.id, scope={"tenant": "acme"})  # type: ignore[arg-type]
    assert info.value.field == "scope"
    assert mem.get(lesson.id, scope=PROJECT) == lesson


def test_the_async_face_forgets_too(tmp_path: Path) -> None:
    with aa.Memory.open(tmp_path / "m.db", clock=FixedClock(), embedder=None) as mem:
        lesson = teach(mem)
        assert asyncio.run(mem.aio.forget(lesson.id, scope=PROJECT)) is True
        assert asyncio.run(mem.aio.forget(lesson.id, scope=PROJECT)) is False
        assert mem.lessons(scope=PROJECT) == []


def taught(mem: aa.Memory, scope: aa.Scope, task: str = TASK) -> aa.Experience:
    with mem.run(task, scope=scope) as run:
        run.tool("deploy", error="Timeout: rollout exceeded 600s")
        run.next_attempt()
        run.tool("raise_probe_timeout", result="ok")
        run.check("deployed", passed=True)
    assert run.experience is not None
    return run.experience


def test_forgetting_a_user_deletes_their_lessons_in_every_app_and_keeps_everyone_elses(mem: aa.Memory) -> None:
    alice, bob = replace(PROJECT, user="alice"), replace(PROJECT, user="bob")
    alice_elsewhere = aa.Scope(tenant="acme", app="billing", project="invoices", user="alice")
    theirs = [taught(mem, alice), taught(mem, alice_elsewhere, "Invoices for March fail to render")]
    kept = [taught(mem, bob), teach(mem), taught(mem, replace(alice, tenant="globex"))]
    assert mem.wait_indexed(10)
    assert {hit.id for hit in mem.search(TASK, scope=alice)} == {theirs[0].id, kept[1].id}

    assert sorted(mem.forget_user("alice", tenant="acme")) == sorted(e.id for e in theirs)
    assert [hit.id for hit in mem.search(TASK, scope=alice)] == [kept[1].id]  # the shared lesson stays
    assert mem.lessons(scope=alice_elsewhere) == []
    with pytest.raises(aa.NotFoundError):  # an outcome for a lesson it was handed cannot bring it back
        mem.record_outcome(theirs[0].id, scope=alice, success=True, key="run:late")
    assert sorted(e.id for e in mem.export()) == sorted(e.id for e in kept)
    assert mem.forget_user("alice", tenant="acme") == []  # erasing again: nothing left, no error


def test_forgetting_a_user_names_a_bad_user_or_tenant(mem: aa.Memory) -> None:
    lesson = taught(mem, replace(PROJECT, user="alice"))
    for user, tenant, field in (("", "acme", "user"), (None, "acme", "user"), ("alice", " acme", "tenant")):
        with pytest.raises(aa.ValidationError) as info:
            mem.forget_user(user, tenant=tenant)  # type: ignore[arg-type]
        assert info.value.field == field
    assert mem.get(lesson.id, scope=lesson.scope) == lesson


def test_the_async_face_forgets_a_user_too(tmp_path: Path) -> None:
    with aa.Memory.open(tmp_path / "m.db", clock=FixedClock(), embedder=None) as mem:
        lesson = taught(mem, replace(PROJECT, user="alice"))
        assert asyncio.run(mem.aio.forget_user("alice", tenant="acme")) == [lesson.id]
        assert list(mem.export()) == []
