"""Searches on one memory from several threads: each thread reads its own ``channel_status``, and
a failure of the vector channel interleaved with ok searches is reported once."""

from __future__ import annotations

import threading
from typing import Any

import afteraction as aa
from afteraction.store import MemoryStore
from tests.conformance.builders import NOW, SCOPE, experience
from tests.hybrid_doubles import Poisoned


def open_memory(embedder: Any, reported: list[str] | None = None, **options: Any) -> aa.Memory:
    sink = reported if reported is not None else []
    mem = aa.Memory(
        MemoryStore(), embedder=embedder, clock=lambda: NOW, on_error=lambda e, w: sink.append(w), **options
    )
    mem.add(experience("a"))
    assert mem.wait_indexed(5)
    return mem


def test_each_thread_reads_the_status_of_its_own_search() -> None:
    mem = open_memory(Poisoned())
    first_done, second_done = threading.Event(), threading.Event()
    seen: dict[str, str] = {}

    def poisoned() -> None:
        mem.search("refund poison pending", scope=SCOPE)  # the embedder returns NaN for this one
        first_done.set()
        assert second_done.wait(5)
        seen["poisoned"] = mem.channel_status.reason

    def plain() -> None:
        assert first_done.wait(5)
        mem.search("refund stuck in pending", scope=SCOPE)
        second_done.set()
        seen["plain"] = mem.channel_status.reason

    threads = [threading.Thread(target=poisoned), threading.Thread(target=plain)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"poisoned": "provider_unavailable", "plain": "ok"}


def test_searches_alternating_ok_and_failing_report_the_failure_once() -> None:
    reported: list[str] = []
    mem = open_memory(Poisoned(), reported)
    for _ in range(10):
        mem.search("refund poison pending", scope=SCOPE)
        mem.search("refund stuck in pending", scope=SCOPE)
    assert reported == ["search.vector.provider_unavailable"]
