"""Forgetting a lesson (``Memory.forget``): it is deleted with its search rows and vectors, gone from
search, blocks, listings and exports; forgetting again, or an id the scope does not see, is False."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
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
