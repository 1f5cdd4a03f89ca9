"""Inside a running agent the recorder never raises and never teaches what the host did not verify:
a check answered with something other than True, False or None stores nothing (naming the check); an
input it cannot read (an exception whose ``__str__`` fails, a tool name that is a list) is reported,
never raised, and never replaces the agent's own exception; a run stopped by an interrupt or a
cancellation is abandoned, and the interrupt propagates unchanged."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.testing import FixedClock

SCOPE = aa.Scope(tenant="acme", app="ops", project="deploys")


class ApiError(Exception):
    """A library exception whose ``__str__`` reads an attribute its ``__init__`` never set."""

    def __init__(self, response: str) -> None:
        self.response = response

    def __str__(self) -> str:
        return f"{self.status}: {self.response}"  # type: ignore[attr-defined]


class Unprintable:
    def __str__(self) -> str:
        raise ValueError("no str")

    def __repr__(self) -> str:
        raise ValueError("no repr")


def open_memory(path: Path, heard: list[tuple[BaseException, str]]) -> aa.Memory:
    return aa.Memory.open(path, embedder=None, clock=FixedClock(), on_error=lambda e, w: heard.append((e, w)))


# -- a check's answer -------------------------------------------------------------------------


@pytest.mark.parametrize("answer", ["false", "FAILED", 2, [], object()])
def test_a_check_answered_with_no_verdict_stores_nothing_even_when_other_evidence_passes(
    tmp_path: Path, answer: object
) -> None:
    heard: list[tuple[BaseException, str]] = []
    mem = open_memory(tmp_path / "m.db", heard)
    with mem.run("Deploy the api service", scope=SCOPE, verify=[aa.verify.tool_succeeded("deploy")]) as run:
        run.tool("deploy", result="ok")
        run.check("smoke-test", passed=answer)  # type: ignore[arg-type]
    assert run.experience is None and mem.lessons(scope=SCOPE) == []  # above all, no Validated lesson
    ((error, where),) = heard
    assert where == "run.check" and isinstance(error, aa.ValidationError)
    assert error.field == "checks[smoke-test].passed"
    assert "must be True, False or None" in error.rule and "not stored" in error.rule


@pytest.mark.parametrize("passed", [True, False])
def test_a_check_answered_with_a_numpy_bool_is_a_verdict(tmp_path: Path, passed: bool) -> None:
    """``(out == expected).all()`` is a ``numpy.bool`` (numpy 2): a pass makes a validated lesson, a fail a
    failed run's record (never validated), and neither is reported; an array answer is no verdict."""
    np = pytest.importorskip("numpy")
    heard: list[tuple[BaseException, str]] = []
    mem = open_memory(tmp_path / "m.db", heard)
    answer = (np.array([1, 2, 3]) == np.array([1, 2, 3 if passed else 4])).all()
    with mem.run("Sum the ledger", scope=SCOPE) as run:
        run.tool("sum", result="6")
        run.check("ledger-matches", passed=answer)
    assert heard == [] and run.experience is not None
    assert (run.experience.status is aa.Status.VALIDATED) is passed
    with mem.run("Sum the ledger again", scope=SCOPE, verify=[aa.verify.check("ledger", lambda r: answer)]) as again:
        again.tool("sum", result="6")
    assert heard == [] and again.experience is not None
    assert (again.experience.status is aa.Status.VALIDATED) is passed
    assert not aa.verify.is_verdict(np.array([True, True])) and aa.verify.is_verdict(np.False_)


def test_the_check_named_in_the_report_is_scrubbed(tmp_path: Path) -> None:
    heard: list[tuple[BaseException, str]] = []
    mem = open_memory(tmp_path / "m.db", heard)
    key = "sk-proj-Name0123456789abcdefghijklmnop"
    run = mem.run("Deploy the api service", scope=SCOPE)
    run.check(f"token={key}", passed="yes")  # type: ignore[arg-type]
    ((error, _),) = heard
    assert key not in str(error) and str(error).startswith("checks[")


# -- inputs the recorder cannot read ----------------------------------------------------------


def test_an_exception_whose_str_fails_is_recorded_by_tool_and_fail(tmp_path: Path) -> None:
    heard: list[tuple[BaseException, str]] = []
    mem = open_memory(tmp_path / "m.db", heard)
    run = mem.run("Refund ticket 42 is stuck in pending", scope=SCOPE)
    run.tool("run_refund_check", error=ApiError("upstream said no"))
    run.fail(ApiError("upstream said no"))
    run.next_attempt()
    run.tool("run_refund_check", result="issued")
    run.check("refund-issued", passed=True)
    lesson = run.finish()
    assert heard == []
    assert lesson is not None and lesson.status is aa.Status.VALIDATED
    assert "ApiError" in lesson.lesson
    assert "upstream said no" in run.to_run().attempts[0].error  # type: ignore[operator]


def test_leaving_the_block_with_such_an_exception_raises_it_and_finishes_the_run(tmp_path: Path) -> None:
    heard: list[tuple[BaseException, str]] = []
    mem = open_memory(tmp_path / "m.db", heard)
    agents_own = ApiError("upstream said no")
    with (
        pytest.raises(ApiError) as caught,
        mem.run("Refund ticket 42 is stuck in pending", scope=SCOPE) as run,
    ):
        run.tool("run_refund_check", result="issued")
        run.check("refund-issued", passed=True)
        raise agents_own
    assert caught.value is agents_own and caught.value.__context__ is None  # the agent's own, untouched
    assert run._outcome is not None and run._outcome.done()  # finished
    assert run.experience is not None and heard == []


@pytest.mark.parametrize("tool", [["list", "as", "tool"], Unprintable(), 42])
def test_a_tool_name_that_is_not_a_string_is_reported_never_raised(tmp_path: Path, tool: object) -> None:
    heard: list[tuple[BaseException, str]] = []
    mem = open_memory(tmp_path / "m.db", heard)
    run = mem.run("Deploy the api service", scope=SCOPE)
    run.tool(tool, error="boom")  # type: ignore[arg-type]
    run.tool(tool, result="ok")  # type: ignore[arg-type]  # tried again after it failed: a new attempt
    run.check("deployed", passed=True)
    lesson = run.finish()
    assert lesson is not None and len(run.to_run().attempts) == 2
    assert [w for _, w in heard] == ["run.tool", "run.tool"]
    error = heard[0][0]
    assert isinstance(error, aa.ValidationError) and error.field == "attempts[0].calls[0].tool"
    assert error.rule.startswith(f"must be a string, got {type(tool).__name__}")


def test_a_check_whose_id_or_detail_cannot_be_read_is_recorded_never_raised(tmp_path: Path) -> None:
    heard: list[tuple[BaseException, str]] = []
    mem = open_memory(tmp_path / "m.db", heard)
    run = mem.run("Deploy the api service", scope=SCOPE)
    run.tool("deploy", result="ok", call_id=Unprintable())  # type: ignore[arg-type]
    run.check(Unprintable(), passed=True, detail=Unprintable())  # type: ignore[arg-type]
    lesson = run.finish()
    assert heard == [] and lesson is not None and lesson.status is aa.Status.VALIDATED
    assert lesson.checks == ("<Unprintable>",)


def test_a_clock_that_fails_under_a_tool_call_is_reported(tmp_path: Path) -> None:
    heard: list[tuple[BaseException, str]] = []
    mem = open_memory(tmp_path / "m.db", heard)
    run = mem.run("Deploy the api service", scope=SCOPE)
    mem._clock = lambda: 1 / 0  # type: ignore[assignment,return-value]
    run.tool("deploy", result="ok")
    assert [(type(e), w) for e, w in heard] == [(ZeroDivisionError, "run.tool")]


# -- interrupted or cancelled runs ------------------------------------------------------------


def test_a_run_interrupted_by_keyboard_interrupt_is_abandoned_and_the_interrupt_propagates(tmp_path: Path) -> None:
    heard: list[tuple[BaseException, str]] = []
    mem = open_memory(tmp_path / "m.db", heard)
    interrupt = KeyboardInterrupt()
    with (
        pytest.raises(KeyboardInterrupt) as caught,
        mem.run("Migrate the billing database to v2", scope=SCOPE) as run,
    ):
        run.tool("migrate_step_1", result="ok")
        run.check("step-1-done", passed=True)
        raise interrupt
    assert caught.value is interrupt
    assert run.experience is None and run.finish() is None and mem.lessons(scope=SCOPE) == [] and heard == []


def test_a_cancelled_async_run_is_abandoned_and_the_cancellation_propagates(tmp_path: Path) -> None:
    heard: list[tuple[BaseException, str]] = []
    mem = open_memory(tmp_path / "m.db", heard)
    recorded: list[aa.RunRecorder] = []

    async def agent(ready: asyncio.Event) -> None:
        async with mem.aio.run("Migrate the billing database to v3", scope=SCOPE) as run:
            recorded.append(run)
            run.tool("migrate_step_1", result="ok")
            run.check("step-1-done", passed=True)
            ready.set()
            await asyncio.sleep(10)  # cancelled here (a timeout, a shutdown)

    async def main() -> None:
        ready = asyncio.Event()
        task = asyncio.create_task(agent(ready))
        await ready.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await mem.aio.close()

    asyncio.run(main())
    assert recorded[0].experience is None and recorded[0].finish() is None and heard == []
