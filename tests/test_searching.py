"""``ChannelNotes``: how the vector channel fared, per thread, and its failures reported when they
start, not again while they last nor more than once a ``REPORT_EVERY``, however searches interleave."""

from __future__ import annotations

import threading

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
