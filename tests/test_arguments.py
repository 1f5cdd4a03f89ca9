"""A host's mistake in setting memory up is a ValidationError naming the argument, at the call
that made it, on every backend: never an AttributeError from deep inside, never a run lost at its
end, never a string read as its letters."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import afteraction as aa
from afteraction.testing import FixedClock

SCOPE = aa.Scope(tenant="acme", app="ops", project="deploys")


@pytest.fixture(params=["memory", "sqlite"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[aa.Memory]:
    url = ":memory:" if request.param == "memory" else str(tmp_path / "m.db")
    with aa.Memory.open(url, clock=FixedClock(), embedder=None) as memory:
        yield memory


CASES: list[tuple[Callable[[aa.Memory], Any], str]] = [
    (lambda m: m.run("task", scope=SCOPE, allow_args="strategy"), "allow_args"),
    (lambda m: m.run("task", scope=SCOPE, allow_args=[1]), "allow_args[0]"),
    (lambda m: m.run("task", scope=SCOPE, verify=5), "verify"),
    (lambda m: m.run("task", scope=SCOPE, verify=[5]), "verify[0]"),
    (lambda m: m.run("task", scope=SCOPE, skill="abc"), "skill"),
    (lambda m: m.run("task", scope=SCOPE, run_id=5), "run_id"),
    (lambda m: m.run("task", scope=SCOPE, run_id=""), "run_id"),
    (lambda m: m.run("task", scope=SCOPE, run_id="x" * 100_000), "run_id"),
    (lambda m: m.run("task", scope=SCOPE, env=[1, 2]), "env"),
    (lambda m: m.search("task", scope=SCOPE, env=5), "env"),
    (lambda m: m.search("task", scope=None), "scope"),
    (lambda m: m.lessons(scope=None), "scope"),
    (lambda m: m.lessons(scope=SCOPE, limit="5"), "limit"),
    (lambda m: m.lessons(scope=SCOPE, offset=-1), "offset"),
    (lambda m: m.get("exp-1", scope=None), "scope"),
    (lambda m: m.record_outcome("exp-1", scope=None, success=True), "scope"),
    (lambda m: m.record_outcome("exp-1", scope=SCOPE, success=True, attempts=0), "attempts"),
    (lambda m: m.reference_block("task", scope=SCOPE, max_records="3"), "max_records"),
    (lambda m: m.reference_block(5, scope=SCOPE), "task"),
    (lambda m: m.add_many(None), "experiences"),
    (lambda m: m.add_many("not lessons"), "experiences"),
]


@pytest.mark.parametrize(("call", "field"), CASES, ids=[field for _, field in CASES])
def test_a_set_up_mistake_names_the_argument(mem: aa.Memory, call: Callable[[aa.Memory], Any], field: str) -> None:
    with pytest.raises(aa.ValidationError) as caught:
        call(mem)
    assert caught.value.field == field


def test_allow_args_of_one_string_is_refused_at_open_too(tmp_path: Path) -> None:
    with pytest.raises(aa.ValidationError) as caught:
        aa.Memory.open(str(tmp_path / "m.db"), allow_args="strategy", embedder=None)
    assert caught.value.field == "allow_args" and "('strategy',)" in caught.value.rule


def test_an_embedder_that_cannot_say_its_model_is_a_config_error(tmp_path: Path) -> None:
    class Broken:
        dimension = 3

        @property
        def model_id(self) -> str:
            raise RuntimeError("no model")

        def embed(self, texts: list[str]) -> list[list[float]]:
            return [[0.0, 0.0, 1.0] for _ in texts]

    with pytest.raises(aa.ConfigError, match="reading its model_id or dimension failed: no model"):
        aa.Memory.open(str(tmp_path / "m.db"), embedder=Broken())
