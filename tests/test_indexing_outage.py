"""The indexer through an embedder outage: a hung embedder holds one thread and gets no new
calls, failures back off, and records written meanwhile get their vectors once it answers."""

from __future__ import annotations

import collections
import hashlib
import threading
import time
from pathlib import Path

import pytest

import afteraction as aa
from afteraction import indexing

SCOPE = aa.Scope(tenant="t", app="a", project="p", agent="g")


def write(mem: aa.Memory, n: int) -> None:
    with mem.run(f"Deploy job {n} fails with exit code {n}", scope=SCOPE) as run:
        run.tool("deploy", error=f"Exit{n}Error")
        run.next_attempt()
        run.tool("deploy", result="ok")
        run.check("c", passed=True)


def threads_named(name: str) -> int:
    return collections.Counter(thread.name for thread in threading.enumerate())[name]


class Hangs:
    model_id = "hangs"
    dimension = 8

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0
        self.threads: set[threading.Thread] = set()  # the threads that called it

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        self.threads.add(threading.current_thread())
        self.release.wait(30)
        return [[1.0] + [0.0] * 7 for _ in texts]


def test_a_hung_embedder_holds_one_thread_and_gets_no_new_calls(tmp_path: Path) -> None:
    hangs, reports = Hangs(), []
    indexers = threads_named("afteraction-indexer")
    mem = aa.Memory.open(tmp_path / "m.db", embedder=hangs, on_error=lambda exc, where: reports.append(str(exc)))
    assert mem._indexer is not None
    mem._indexer.embed_timeout = 0.1  # the default is 60 s; the shape is the same
    try:
        for n in range(12):
            write(mem, n)
            time.sleep(0.1)
        time.sleep(0.5)
        assert hangs.calls == 1
        assert len(hangs.threads) == 1  # this memory's embed threads (other tests' unclosed memories have theirs)
        assert threads_named("afteraction-indexer") - indexers <= 1  # other tests' unclosed memories may hold theirs
        assert any("took over 0.1 s" in report for report in reports)
        assert any("not called again until it does" in report for report in reports)
    finally:
        hangs.release.set()
        mem.close(0.2)


class Flaky:
    model_id = "flaky"
    dimension = 8

    def __init__(self) -> None:
        self.down = True
        self.calls_down = 0

    def embed(self, texts: list[str]) -> list[list[float]]:
        if self.down:
            self.calls_down += 1
            raise RuntimeError("HTTP 429 Too Many Requests")
        return [[((b % 17) - 8) / 8 + 0.01 for b in hashlib.sha256(t.encode()).digest()[:8]] for t in texts]


def test_records_written_during_an_outage_get_vectors_once_the_embedder_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexing, "FIRST_BACKFILL", 0.3, raising=False)
    flaky, indexers = Flaky(), threads_named("afteraction-indexer")
    mem = aa.Memory.open(tmp_path / "m.db", embedder=flaky, on_error=lambda *_: None)
    try:
        for n in range(20):
            write(mem, n)
        mem.wait_indexed(5)
        assert mem.store.count_missing_vectors("flaky") == 20  # type: ignore[attr-defined]
        calls = flaky.calls_down
        time.sleep(1.5)  # no busy loop: a few scheduled passes (0.3 s, then 0.6 s, ...), each ~21 calls
        assert flaky.calls_down - calls <= 3 * 21, flaky.calls_down - calls
        assert threads_named("afteraction-indexer") - indexers <= 1
        flaky.down = False
        deadline = time.monotonic() + 10
        while mem.store.count_missing_vectors("flaky") and time.monotonic() < deadline:  # type: ignore[attr-defined]
            time.sleep(0.1)
        assert mem.store.count_missing_vectors("flaky") == 0  # type: ignore[attr-defined]
    finally:
        mem.close()


def test_a_long_outage_frees_the_thread_and_the_next_answer_catches_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scheduled passes stop after ``MAX_PASSES`` in a row fail, so a memory never closed (a host that drops it)
    does not hold a thread through an outage for ever; a batch the embedder answers later schedules the pass."""
    monkeypatch.setattr(indexing, "FIRST_BACKFILL", 0.05)
    monkeypatch.setattr(indexing, "MAX_BACKFILL", 0.1)
    monkeypatch.setattr(indexing, "MAX_PASSES", 2)
    monkeypatch.setattr(indexing, "MAX_RETRY", 0.2)  # the wait after a failed batch (30 s by default)
    flaky, indexers = Flaky(), threads_named("afteraction-indexer")
    mem = aa.Memory.open(tmp_path / "m.db", embedder=flaky, on_error=lambda *_: None)
    try:
        for n in range(5):
            write(mem, n)
        deadline = time.monotonic() + 5
        while threads_named("afteraction-indexer") > indexers and time.monotonic() < deadline:
            time.sleep(0.05)
        assert threads_named("afteraction-indexer") == indexers  # the worker ended: no pass is scheduled
        assert mem.store.count_missing_vectors("flaky") == 5  # type: ignore[attr-defined]
        flaky.down = False
        write(mem, 99)  # answered: the records it failed are tried again
        deadline = time.monotonic() + 5
        while mem.store.count_missing_vectors("flaky") and time.monotonic() < deadline:  # type: ignore[attr-defined]
            time.sleep(0.05)
        assert mem.store.count_missing_vectors("flaky") == 0  # type: ignore[attr-defined]
    finally:
        mem.close()
