"""``ChannelNotes``: how the vector channel fared, per thread, and its failures reported when they
start, not again while they last nor more than once a ``REPORT_EVERY``, however searches interleave."""

from __future__ import annotations

import logging
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest

import afteraction as aa
from afteraction import searching
from afteraction.searching import NO_TERMS, REPORT_EVERY, ChannelNotes
from afteraction.vector_channel import ChannelStatus

OK = ChannelStatus("ok")
TIMEOUT = ChannelStatus("timeout", "embedding and search took over 500 ms")
DOWN = ChannelStatus("provider_unavailable", "ConnectionError: refused")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def notes() -> tuple[ChannelNotes, list[str], Clock]:
    heard: list[str] = []
    clock = Clock()
    return (
        ChannelNotes(ChannelStatus("not_configured"), lambda e, w: heard.append(f"{w}: {e}"), clock=clock),
        heard,
        clock,
    )


def test_a_failure_is_reported_when_it_starts_and_not_while_it_lasts() -> None:
    board, heard, clock = notes()
    for _ in range(5):
        board.note(TIMEOUT)
        clock.now += REPORT_EVERY  # however long it lasts
    assert heard == [
        "search.vector.timeout: vector channel timeout: embedding and search took over 500 ms; searching by text only"
    ]


def test_interleaved_ok_and_failing_searches_report_once_a_minute_with_a_count() -> None:
    """Found by a tester: concurrent searches alternating ok / timeout reported the timeout 32
    times in 610 searches ("once per reason in a row" meets interleaving)."""
    board, heard, clock = notes()
    for _ in range(30):
        board.note(TIMEOUT)
        board.note(OK)
        clock.now += 1
    assert len(heard) == 1
    clock.now += REPORT_EVERY
    board.note(TIMEOUT)
    assert len(heard) == 2 and "(29 more searches failed so since it was last reported)" in heard[1]


def test_each_reason_is_its_own_and_no_terms_neither_reports_nor_ends_a_failure() -> None:
    board, heard, _ = notes()
    board.note(DOWN)
    board.note(NO_TERMS)
    board.note(ChannelStatus("not_configured"))
    board.note(DOWN)
    board.note(TIMEOUT)
    assert [line.split(":")[0] for line in heard] == ["search.vector.provider_unavailable", "search.vector.timeout"]


def test_each_thread_reads_its_own_last_status_and_a_new_thread_the_last_of_any() -> None:
    board, _, _ = notes()
    assert board.status.reason == "not_configured"
    board.note(DOWN)
    seen: list[str] = []

    def other() -> None:
        seen.append(board.status.reason)  # has not searched: the last search of any thread
        board.note(OK)
        seen.append(board.status.reason)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen == ["provider_unavailable", "ok"]
    assert board.status.reason == "provider_unavailable"  # this thread's own, though another searched since


@pytest.mark.parametrize("env", [None, {"os": "linux"}])  # with an env, ranking itself decodes each record
def test_one_unreadable_stored_record_costs_a_search_only_itself(
    tmp_path: Path, env: dict[str, str] | None, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record stored unreadable (by a bug, or by hand) failed every search that found it, and so
    every block: the agent lost all its lessons to one row."""
    path = tmp_path / "memory.db"
    mem = aa.Memory.open(path, embedder=None)
    scope = aa.Scope(tenant="t", app="a", project="p", agent="g")
    for task in ("Disk full on the build runner", "Disk full on the log server", "Disk full on the web host"):
        with mem.run(task, scope=scope, env={"os": "linux"}) as run:
            run.tool("clean_disk", result="ok")
            run.check("space", passed=True)
    hits = mem.search("disk full", scope=scope, k=2, env=env)
    bad = hits[0].experience.id
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE experiences SET data = '{\"id\": 1}' WHERE id = ?", (bad,))
    monkeypatch.setattr(searching, "_SAID", set())
    with caplog.at_level(logging.WARNING, logger="afteraction"):
        found = mem.search("disk full", scope=scope, k=2, env=env)
        block = mem.reference_block("disk full", scope=scope, env=env)
    assert len(found) == 2 and bad not in {hit.experience.id for hit in found}  # the next hit took its place
    assert "Disk full" in block
    said = [r.getMessage() for r in caplog.records if repr(bad) in r.getMessage()]
    assert len(said) == 1 and "cannot be read: task_id: is required" in said[0]  # once, however often it is met
    mem.close()
