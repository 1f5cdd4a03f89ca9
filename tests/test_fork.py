"""After ``os.fork()`` (multiprocessing's fork start method) the child starts fresh: the vector
channel's shared threads, background indexing and the bundled embedder's batch helpers are the
parent's, dead in the child, so each is rebuilt there instead of waited on for ever."""

from __future__ import annotations

import json
import os
import select
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

import afteraction as aa
from afteraction.embed import Checked, batching
from afteraction.store import MemoryStore
from afteraction.vector_channel import LazyEmbedder
from tests.conformance.builders import NOW, SCOPE, experience
from tests.embed.conftest import bundled_minilm
from tests.hybrid_doubles import Gate, Letters, Sleepy

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="this platform has no fork"),
    # Python 3.12+ warns that forking a process with threads may deadlock: what these tests check.
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]

#: Seconds a child may take before the test calls it hung.
CHILD_TIMEOUT = 5.0


def in_child(check: Callable[[], Any], timeout: float = CHILD_TIMEOUT) -> Any:
    """``check()`` run in a forked child; what it returned (JSON), or ``"hung"``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report through the pipe, never return into pytest
        code = 0
        try:
            os.close(read)
            try:
                report = json.dumps(check())
            except BaseException as exc:
                report = json.dumps(f"raised {type(exc).__name__}: {exc}")
            with os.fdopen(write, "wb") as out:
                out.write(report.encode())
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    received = b""
    deadline = time.monotonic() + timeout
    try:
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([read], [], [], left)
            if not ready:
                break
            chunk = os.read(read, 65536)
            if not chunk:
                return json.loads(received) if received else "no report"
            received += chunk
        os.kill(pid, signal.SIGKILL)
        return "hung"
    finally:
        os.close(read)
        os.waitpid(pid, 0)


def memory(store: MemoryStore, embedder: Any, reported: list[str] | None = None) -> aa.Memory:
    sink = reported if reported is not None else []
    return aa.Memory(store, embedder=embedder, clock=lambda: NOW, on_error=lambda e, w: sink.append(f"{w}: {e}"))


def searched(mem: aa.Memory, times: int = 3) -> list[str]:
    reasons: list[str] = []
    for _ in range(times):
        mem.search("refund stuck pending", scope=SCOPE)
        reasons.append(mem.channel_status.reason)
    return reasons


def test_a_child_searches_by_vector_after_the_parent_did() -> None:
    parent = memory(MemoryStore(), Letters())
    parent.add(experience("a"))
    assert parent.wait_indexed(5)
    assert searched(parent, 4) == ["ok"] * 4  # the shared query threads run in the parent

    def child() -> dict[str, list[str]]:
        fresh = memory(MemoryStore(), Letters())
        fresh.add(experience("b"))
        fresh.wait_indexed(2)
        return {"fresh": searched(fresh), "inherited": searched(parent)}

    assert in_child(child) == {"fresh": ["ok"] * 3, "inherited": ["ok"] * 3}


def test_searches_in_flight_at_the_fork_do_not_hold_the_childs_channel() -> None:
    embedder = Sleepy(5.0)
    parent = memory(MemoryStore(), embedder)
    parent.add(experience("a"))
    try:
        assert searched(parent, 2) == ["timeout", "timeout"]  # both still embedding
        assert searched(parent, 1) == ["timeout"]  # the channel is full

        def child() -> list[str]:
            embedder.slow = False  # the child's copy answers at once
            return searched(parent)

        assert in_child(child) == ["ok"] * 3
    finally:
        embedder.release()


def test_a_child_loads_the_embedder_the_parent_was_still_loading() -> None:
    parent_pid, loading, release = os.getpid(), threading.Event(), threading.Event()

    def load() -> Checked:
        if os.getpid() == parent_pid:
            loading.set()
            release.wait(10)
        return Checked(Letters())

    lazy = LazyEmbedder(load=load)
    lazy.warm()
    assert loading.wait(5)
    try:
        assert in_child(lambda: lazy.get(wait=2).model_id) == "letters@1"
    finally:
        release.set()
    assert lazy.get(wait=5).model_id == "letters@1"


def test_a_child_indexes_in_the_background_while_the_parents_worker_was_busy() -> None:
    embedder = Gate("Refund")
    store = MemoryStore()
    parent = memory(store, embedder)
    assert parent.wait_indexed(5)
    parent.add(experience("a"))
    assert embedder.entered.wait(5)  # the parent's worker is inside embed() at the fork
    try:

        def child() -> dict[str, Any]:
            parent.add(experience("b", task="Invoice export times out"))
            done = parent.wait_indexed(2)
            missing = [e.id for e in store.missing_vectors("letters@1")]
            fresh = memory(MemoryStore(), Letters())
            fresh.add(experience("c", task="Invoice export times out"))
            return {"inherited": [done, missing], "fresh": fresh.wait_indexed(2)}

        # "a" is left to the parent, whose worker was embedding it
        assert in_child(child) == {"inherited": [True, ["a"]], "fresh": True}
    finally:
        embedder.release.set()
    assert parent.wait_indexed(5) and store.missing_vectors("letters@1") == []


def test_a_batch_in_a_child_does_not_wait_on_the_parents_helper_threads() -> None:
    helpers = batching.pool(2)  # one helper thread, and the caller's
    done: list[int] = []
    calls = [[0], [1], [2], [3]]
    batching.run(helpers, 2, calls, lambda indexes: done.extend(indexes))  # the helper thread starts
    assert sorted(done) == [0, 1, 2, 3]

    def child() -> list[int]:
        done.clear()
        batching.run(helpers, 2, calls, lambda indexes: done.extend(indexes))
        return sorted(done)

    try:
        assert in_child(child) == [0, 1, 2, 3]
    finally:
        helpers.shutdown()


def test_the_bundled_model_embeds_a_batch_in_a_child_on_fresh_helper_threads() -> None:
    minilm = bundled_minilm(parallel=2, cache_size=0)
    texts = [f"deploy {i} failed on a lock" for i in range(8)]
    expected = minilm.embed_array(texts)
    assert minilm._pool is not None  # the parent's helper threads started

    def child() -> dict[str, Any]:
        dropped = minilm._pool is None
        vectors = minilm.embed_array(texts)
        return {
            "dropped": dropped,
            "same": bool(abs(vectors - expected).max() < 1e-5),
            "again": minilm._pool is not None,
        }

    assert in_child(child, timeout=20) == {"dropped": True, "same": True, "again": True}


def test_a_native_call_in_flight_at_the_fork_is_not_waited_for_at_the_childs_exit() -> None:
    """The exit gate counted the parent's call in flight in the child too: a child that exited normally
    waited 30 s for a call that is not running there."""
    from afteraction.embed.gate import GATE

    inside, release = threading.Event(), threading.Event()

    def native_call() -> None:
        with GATE.call():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=native_call, daemon=True)
    thread.start()
    assert inside.wait(5)
    try:
        assert in_child(lambda: GATE.close(timeout=0.5)) is True
    finally:
        release.set()
        thread.join(5)
