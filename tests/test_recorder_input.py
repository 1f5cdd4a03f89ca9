"""What a running agent hands the recorder, odd or hostile, on every store backend: secrets in
names never stored, values that are not text made storable, a check's answer taken only when it
is one; memory never raises into the agent, and a problem reaches ``on_error`` naming the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.testing import FixedClock, make_experience

SCOPE = aa.Scope(tenant="acme", app="ops", project="deploys")
KEY = "sk-proj-Name0123456789abcdefghijklmnop"


@pytest.fixture(params=["memory", "sqlite"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[aa.Memory]:
    url = ":memory:" if request.param == "memory" else str(tmp_path / "m.db")
    with aa.Memory.open(url, clock=FixedClock(), embedder=None) as memory:
        yield memory


def stored(mem: aa.Memory) -> str:
    return json.dumps([e.to_dict() for e in mem.export()], ensure_ascii=False)


def test_secrets_in_tool_names_and_check_ids_are_never_stored(mem: aa.Memory) -> None:
    with mem.run("Deploy the api service to production", scope=SCOPE) as run:
        run.tool("http_get https://admin:hunter2pass@ci.internal/deploy", result="ok", call_id=f"call {KEY}")
        run.check(f"GET https://admin:hunter2pass@status.internal/health token={KEY}", passed=True)
    block = mem.reference_block("Deploy the api service to production", scope=SCOPE, layout="verbose")
    assert run.experience is not None and block
    for text in (stored(mem), block):
        assert "hunter2pass" not in text and KEY not in text
    assert "http_get" in stored(mem)


def test_secrets_in_a_learned_runs_names_are_never_stored(mem: aa.Memory) -> None:
    with mem.run("Deploy the api service", scope=SCOPE) as recorded:
        recorded.tool(f"deploy {KEY}", result="ok")
        recorded.check("deployed", passed=True)
    run = recorded.to_run()
    evidence = (aa.Evidence(f"deployed password={KEY}", True),)
    raw = aa.Run(
        run.id + "-2",
        run.task,
        SCOPE,
        run.started_at,
        run.attempts,
        ended_at=run.ended_at,
        state="completed",
        evidence=evidence,
    )
    assert mem.learn(raw) is not None
    assert KEY not in stored(mem)


def test_a_lone_surrogate_is_made_storable_and_the_run_kept(mem: aa.Memory) -> None:
    """Text decoded with ``surrogateescape`` (file names, a process's output) is not Unicode; the run
    it appears in is kept, the surrogate made U+FFFD, in every field it can reach."""
    reported: list[str] = []
    with mem.run(
        "Rebuild the index \udcff",
        scope=SCOPE,
        env={"dir \udc80": "x \udc80"},
        on_error=lambda e, w: reported.append(w),
    ) as run:
        run.tool("reindex \udc81", args={"path": "/srv/\udc82"}, result="ok \udc83", error=None)
        run.tool("reindex", error="OSError: /srv/\udc84 not found")
        run.check("indexed \udc85", passed=True, detail="done \udc86")
    assert run.experience is not None and reported == []
    assert "\ufffd" in stored(mem)


def test_an_experience_with_a_lone_surrogate_is_refused_naming_the_field(mem: aa.Memory) -> None:
    with pytest.raises(aa.ValidationError) as caught:
        make_experience("Rebuild the index \udcff", scope=SCOPE, id="exp-1")
    assert caught.value.field == "task"
    assert mem.lessons(scope=SCOPE) == []


def test_a_call_id_that_is_not_a_string_is_kept_as_text(mem: aa.Memory) -> None:
    with mem.run("Deploy the api service", scope=SCOPE) as run:
        run.tool("deploy", result="ok", call_id=5)  # type: ignore[arg-type]
        run.check("deployed", passed=True)
    assert run.experience is not None
    assert run.experience.solution is not None


@pytest.mark.parametrize("detail", [None, 5, "fine"])
def test_a_checks_detail_of_any_kind_never_raises(mem: aa.Memory, detail: object) -> None:
    with mem.run("Deploy the api service", scope=SCOPE) as run:
        run.tool("deploy", result="ok")
        run.check("deployed", passed=True, detail=detail)  # type: ignore[arg-type]
    assert run.experience is not None and run.experience.status is aa.Status.VALIDATED


@pytest.mark.parametrize("answer", ["false", "true", 2, [], object()])
def test_a_check_answer_that_is_not_true_or_false_is_reported_not_read(mem: aa.Memory, answer: object) -> None:
    reported: list[tuple[BaseException, str]] = []
    with mem.run("Clear the cache", scope=SCOPE, on_error=lambda e, w: reported.append((e, w))) as run:
        run.tool("clear_cache", result="ok")
        run.check("cache-empty", passed=answer)  # type: ignore[arg-type]
    assert run.experience is None  # no verdict: nothing stored, above all no Validated lesson
    assert mem.lessons(scope=SCOPE) == []
    ((error, where),) = reported
    assert where == "run.check" and isinstance(error, aa.ValidationError)
    assert error.field == "checks[cache-empty].passed"


@pytest.mark.parametrize("answer", [True, False, 1, 0])
def test_true_and_false_and_one_and_zero_are_answers(mem: aa.Memory, answer: object) -> None:
    with mem.run("Clear the cache", scope=SCOPE) as run:
        run.tool("clear_cache", result="ok")
        run.check("cache-empty", passed=answer)  # type: ignore[arg-type]
    assert run.experience is not None
    assert run.experience.status is (aa.Status.VALIDATED if answer else aa.Status.QUARANTINED)


def test_a_verifier_answering_a_string_is_reported_and_stores_nothing(mem: aa.Memory) -> None:
    reported: list[str] = []
    check = aa.verify.check("cache-empty", lambda run: "false")  # type: ignore[arg-type,return-value]
    with mem.run("Clear the cache", scope=SCOPE, verify=[check], on_error=lambda e, w: reported.append(w)) as run:
        run.tool("clear_cache", result="ok")
    assert run.experience is None and reported == ["run.finish"]


def test_an_environment_that_is_not_a_mapping_is_refused_at_the_start(mem: aa.Memory) -> None:
    with pytest.raises(aa.ValidationError) as caught:
        mem.run("Clear the cache", scope=SCOPE, env=["os", "linux"])  # type: ignore[arg-type]
    assert caught.value.field == "env"


def test_a_run_finished_again_reports_the_record_that_is_stored(mem: aa.Memory) -> None:
    """Ids derive from the run: a second recording of the same run (a retry of the host's job) stores
    nothing new, and says which record is stored rather than the one it would have made."""
    with mem.run("Clear the cache", scope=SCOPE, run_id="job-7") as first:
        first.tool("clear_cache", result="ok")
        first.check("cache-empty", passed=True)
    with mem.run("Clear the cache", scope=SCOPE, run_id="job-7") as again:
        again.tool("clear_cache", error="CacheError: busy")
        again.check("cache-empty", passed=False)
    assert first.experience is not None and again.experience is not None
    assert again.experience == first.experience == mem.get(first.experience.id, scope=SCOPE)
    assert again.experience.status is aa.Status.VALIDATED


def test_a_run_whose_id_another_scope_holds_is_reported_not_said_stored(mem: aa.Memory) -> None:
    """Ids are unique in a tenant: a lesson added in one project under the id another project's run will
    derive must not make that run's lesson vanish while the run says it was stored."""
    from afteraction.core.ids import experience_id

    there = aa.Scope(tenant="acme", app="ops", project="payments")
    squatter = make_experience("Unrelated", scope=SCOPE, id=experience_id("ci-7", there))
    assert mem.store.put(squatter)  # stored as it was before ``add`` re-derived such ids (``core.ids.own_id``)
    reported: list[BaseException] = []
    with mem.run("Clear the cache", scope=there, run_id="ci-7", on_error=lambda e, w: reported.append(e)) as run:
        run.tool("clear_cache", result="ok")
        run.check("cache-empty", passed=True)
    assert run.experience is None
    (error,) = reported
    assert isinstance(error, aa.ConflictError) and "another scope's" in str(error)


def test_a_lesson_added_under_another_scopes_run_id_does_not_take_its_place(mem: aa.Memory) -> None:
    """A caller of one project who adds a lesson under the id a run of another project derives keeps
    neither that run's lesson out nor learns whether it exists: the added lesson gets the id its own
    task_id and scope derive, and the run's lesson is stored. Other ids are kept as given."""
    from afteraction.core.ids import experience_id

    there = aa.Scope(tenant="acme", app="ops", project="payments")
    squatter = make_experience("Unrelated", scope=SCOPE, id=experience_id("ci-7", there))
    assert mem.add(squatter) and mem.add_many([replace(squatter, task_id="other")]) == 1
    with pytest.raises(aa.NotFoundError):
        mem.get(squatter.id, scope=SCOPE)
    assert mem.get(experience_id(squatter.task_id, SCOPE), scope=SCOPE).task == "Unrelated"
    assert mem.get(experience_id("other", SCOPE), scope=SCOPE).task == "Unrelated"
    with mem.run("Clear the cache", scope=there, run_id="ci-7") as run:
        run.tool("clear_cache", result="ok")
        run.check("cache-empty", passed=True)
    assert run.experience is not None and run.experience.id == squatter.id
    assert mem.get(squatter.id, scope=there) == run.experience
    assert mem.add(make_experience("Kept", scope=SCOPE, id="lesson-by-hand")) and mem.get("lesson-by-hand", scope=SCOPE)


@pytest.mark.parametrize("backend", ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_nul_in_a_run_is_made_storable_on_every_backend(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """PostgreSQL refuses a NUL in text: a run with one (a binary tool output) lost its lesson there only."""
    url = {"memory": ":memory:", "sqlite": str(tmp_path / "m.db")}.get(backend) or request.getfixturevalue("pg_url")
    reported: list[str] = []
    scope = aa.Scope(tenant=f"nul-{backend}", app="ops", project="deploys")
    with aa.Memory.open(url, embedder=None, on_error=lambda e, w: reported.append(w)) as memory:
        with memory.run("Task with a NUL \x00 byte", scope=scope, run_id="n1") as run:
            run.tool("tool", result="ok\x00", error=None)
            run.tool("tool", error="OSError: bad \x00 path")
            run.check("c", passed=True, detail="fine\x00")
        assert run.experience is not None and reported == []
        assert "\x00" not in json.dumps(run.experience.to_dict())
        assert memory.get(run.experience.id, scope=scope) == run.experience
        with pytest.raises(aa.NotFoundError):
            memory.get("exp_\x00", scope=scope)  # no lesson can have that id, on any backend


def test_an_on_error_that_fails_itself_is_logged_with_the_failure_it_was_given(
    mem: aa.Memory, caplog: pytest.LogCaptureFixture
) -> None:
    with mem.run("Clear the cache", scope=SCOPE, on_error=lambda e: None) as run:  # type: ignore[arg-type,misc]
        run.check("cache-empty", passed="false")  # type: ignore[arg-type]
    assert run.experience is None
    (logged,) = [r for r in caplog.records if "on_error failed" in r.getMessage()]
    assert "run.check" in logged.getMessage() and "checks[cache-empty].passed" in logged.getMessage()


def test_a_retried_tool_past_the_attempt_limit_is_reported_once(tmp_path: Path) -> None:
    reported: list[str] = []
    limits = aa.Limits(max_attempts=3)
    memory = aa.Memory.open(str(tmp_path / "m.db"), limits=limits, embedder=None)
    with memory, memory.run("Flaky deploy", scope=SCOPE, on_error=lambda e, w: reported.append(f"{w}: {e}")) as run:
        for _ in range(6):
            run.tool("flaky", error="TimeoutError: slow")
        run.tool("flaky", result="ok")
        run.check("deployed", passed=True)
    assert reported == ["run.tool: attempts: more than 3 attempts; later calls join the last one"]
    assert run.experience is not None and run.experience.lesson.startswith("Verified after 3 attempts.")
