"""The recorder's finish, once: a finish while another is under way waits for it and returns its
result (never a None that reads as "no verdict"); text is scrubbed at the finish, not while recording.

A slow store is a real one: an SQLite file whose write lock a second connection holds."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.testing import FixedClock

SCOPE = aa.Scope(tenant="acme", app="support", project="refunds", agent="refund-agent")
KEY = "sk-proj-Name0123456789abcdefghijklmnop"


@contextmanager
def write_locked(path: Path) -> Iterator[None]:
    """Another writer holds ``path``'s write lock until the block ends (well within the busy timeout)."""
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        yield
        other.execute("COMMIT")
    finally:
        other.close()


def open_memory(path: Path, heard: list[str] | None = None) -> aa.Memory:
    sink = heard if heard is not None else []
    return aa.Memory.open(path, embedder=None, clock=FixedClock(), on_error=lambda e, w: sink.append(f"{w}: {e}"))


def verified(mem: aa.Memory | aa.AsyncMemory, run_id: str = "host-run-1") -> aa.RunRecorder:
    run = mem.run("Refund ticket 42 is stuck in pending", scope=SCOPE, run_id=run_id)
    run.tool("run_refund_check", result="issued")
    run.check("refund-issued", passed=True)
    return run


def test_a_finish_while_another_runs_waits_for_it_and_returns_its_result(tmp_path: Path) -> None:
    heard: list[str] = []
    mem = open_memory(tmp_path / "m.db", heard)
    run = verified(mem)
    results: dict[str, aa.Experience | None] = {}

    def finish(name: str) -> None:
        results[name] = run.finish()

    first, second = threading.Thread(target=finish, args=("first",)), threading.Thread(target=finish, args=("second",))
    with write_locked(tmp_path / "m.db"):
        first.start()
        while run._outcome is None:  # the first finish has begun
            threading.Event().wait(0.001)
        second.start()
        second.join(0.2)
        assert second.is_alive()  # waiting for the first, not answering None
    first.join(5)
    second.join(5)
    assert results["first"] is not None and results["second"] is results["first"]
    assert run.finish() is results["first"] and heard == []
    assert [lesson.experience.id for lesson in mem.lessons(scope=SCOPE)] == [results["first"].id]
    mem.close()


def test_a_finish_called_from_inside_the_finish_does_not_wait_on_itself(tmp_path: Path) -> None:
    answers: list[object] = []
    runs: list[aa.RunRecorder] = []

    def on_error(exc: BaseException, where: str) -> None:
        answers.append(runs[0].finish())  # a handler that finishes the run it hears about

    mem = aa.Memory.open(tmp_path / "m.db", embedder=None, on_error=on_error)
    runs.append(verified(mem))
    mem.store.close()  # the write fails: on_error hears it inside the finish
    assert runs[0].finish() is None and answers == [None]


def test_an_abandoned_run_finishes_as_none(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m.db")
    run = verified(mem)
    run.abandon()
    assert run.finish() is None and mem.lessons(scope=SCOPE) == []
    mem.close()


def test_the_task_and_check_details_are_scrubbed_at_the_finish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from afteraction.core.sanitize import scrub_text

    scrubbed: list[int] = []

    def counted(text: str) -> str:
        scrubbed.append(len(text))
        return scrub_text(text)

    monkeypatch.setattr("afteraction.recorder.scrub_text", counted)
    mem = open_memory(tmp_path / "m.db")
    log = f"deploy failed with token={KEY} " + "line of a pasted log " * 2000
    run = mem.run(f"Fix the deploy: {log}", scope=SCOPE)
    run.tool("deploy", result="ok")
    run.check("deployed", passed=True, detail=log)
    assert scrubbed == [] and run._raw_task is not None  # recording did not scrub
    stored = run.finish()
    assert stored is not None and scrubbed and KEY not in stored.task
    assert KEY not in " ".join(e.detail for e in run.to_run().evidence) and KEY not in run.task
    mem.close()
