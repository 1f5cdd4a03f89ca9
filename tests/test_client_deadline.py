"""A slow service costs a remote memory's caller a bounded wait: a search or a block gives up after
``search_timeout``, any other request after ``timeout``, in all, whether the service never answers
or answers a byte at a time (httpx's own timeout bounds each read, not a whole request: before,
a run waited on a trickling service for as long as it trickled). Inside a run nothing raises."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.client import RemoteMemory
from afteraction.errors import StoreError

SCOPE = aa.Scope(tenant="dev", app="support", project="refunds")


HEAD = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"


@contextlib.contextmanager
def loopback(answer: Callable[[socket.socket, threading.Event], None]) -> Iterator[str]:
    """A loopback HTTP service calling ``answer(connection, stop)`` for each connection, in a thread of its own."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def each(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError, IndexError):
            answer(conn, stop)

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=each, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        server.close()


@pytest.fixture(params=["silent", "trickle"])
def stalling(request: pytest.FixtureRequest) -> Iterator[str]:
    """A loopback HTTP service that reads each request, then never answers ("silent") or answers
    a byte every 0.2 s ("trickle": every read well within httpx's timeout)."""

    def answer(conn: socket.socket, stop: threading.Event) -> None:
        conn.recv(65536)
        if request.param == "trickle":
            body = b'{"hits": []}' + b" " * 200
            conn.sendall(HEAD % len(body))
            for byte in body:
                if stop.wait(0.2):
                    return
                conn.sendall(bytes([byte]))
        stop.wait(30)

    with loopback(answer) as url:
        yield url


def test_a_search_gives_up_after_its_deadline(stalling: str) -> None:
    with RemoteMemory(stalling, search_timeout=0.3, timeout=5) as mem:
        started = time.monotonic()
        with pytest.raises(StoreError, match=r"POST /experience/search: .* did not answer within 0.3 s"):
            mem.search("refund stuck", scope=SCOPE)
        assert time.monotonic() - started < 3  # the service trickles for 40 s


def test_a_run_goes_on_without_a_block_and_its_finish_is_bounded_too(stalling: str) -> None:
    reports: list[tuple[str, BaseException]] = []
    with RemoteMemory(stalling, search_timeout=0.3, timeout=0.6, on_error=lambda e, w: reports.append((w, e))) as mem:
        started = time.monotonic()
        with mem.run("Refund ticket 42 is stuck", scope=SCOPE) as run:
            assert run.reference_block() == ""
            run.tool("refund", result="issued")
            run.check("refund-issued", passed=True)
        assert time.monotonic() - started < 5
    assert [type(e) for _, e in reports] == [StoreError, StoreError]
    assert "within 0.3 s" in str(reports[0][1]) and "within 0.6 s" in str(reports[1][1])


def test_requests_left_behind_by_a_stalled_service_are_bounded(stalling: str) -> None:
    with RemoteMemory(stalling, search_timeout=0.05, timeout=5) as mem:
        for _ in range(40):
            with pytest.raises(StoreError, match="did not answer"):
                mem.search("refund", scope=SCOPE)
        waiting = [t for t in threading.enumerate() if t.name == "afteraction-remote"]
        assert 0 < len(waiting) <= 16


def test_the_deadlines_must_be_positive() -> None:
    for bad in (0, -1, True, "2"):
        with pytest.raises(aa.ConfigError, match="search_timeout must be a positive number of seconds"):
            RemoteMemory("http://127.0.0.1:9", search_timeout=bad)  # type: ignore[arg-type]


def test_a_finish_waits_timeout_in_all_however_many_lessons_the_run_was_given(tmp_path: Path) -> None:
    """A service that answers the search and the lesson at once and never answers an outcome: leaving a
    run given four lessons (whose fixes it applied) waited ``timeout`` once per outcome, one after another."""
    local = aa.Memory.open(str(tmp_path / "local.db"), embedder=None)
    for i in range(4):
        with local.run(f"Reset the cache of shard {i}", scope=SCOPE) as run:
            run.tool(f"flush_cache_{i}", result="ok")
            run.check("cache-empty", passed=True)
    hits = {"hits": [hit.to_dict() for hit in local.search("Reset the cache of shard", scope=SCOPE, k=10)]}
    assert len(hits["hits"]) == 4
    local.close()
    reports: list[tuple[str, BaseException]] = []
    with answering({"/experience/search": hits, "/experience/lessons": {"stored": 1}}) as url:
        mem = RemoteMemory(url, timeout=1.0, on_error=lambda e, w: reports.append((w, e)))
        with mem.run("Reset the cache of shard 7", scope=SCOPE) as run:
            assert len(run.search(k=5)) == 4
            for i in range(4):
                run.tool(f"flush_cache_{i}", result="ok")
            started = time.monotonic()
            run.check("cache-empty", passed=False)
        waited = time.monotonic() - started
        mem.close()
    assert waited < 2.5  # one `timeout` (1 s) in all; it was four
    assert [where for where, _ in reports] == ["run.feedback"] * 4
    assert "did not answer within" in str(reports[0][1])
    assert all("not sent: the run's finish had used its 1 s" in str(e) for _, e in reports[1:])


def test_a_slow_host_check_does_not_use_up_the_finishs_deadline() -> None:
    """The deadline covers the requests to the service, not the host's own checks: a check that took longer than
    ``timeout`` left no time to send the lesson ("not sent: the run's finish had used its 0.5 s")."""
    reports: list[tuple[str, BaseException]] = []

    def slow_check(run: object) -> bool:
        time.sleep(0.8)  # a test suite the host runs as its check
        return True

    with answering({"/experience/search": {"hits": []}, "/experience/lessons": {"stored": 1}}) as url:
        mem = RemoteMemory(url, timeout=0.5, on_error=lambda e, w: reports.append((w, e)))
        with mem.run("Refund ticket 42 is stuck", scope=SCOPE, verify=[aa.verify.check("suite", slow_check)]) as run:
            run.tool("refund", result="issued")
        mem.close()
    assert reports == [] and run.experience is not None


@contextlib.contextmanager
def answering(fast: dict[str, object]) -> Iterator[str]:
    """A loopback HTTP service answering the paths of ``fast`` at once with their JSON, and never any other."""

    def answer(conn: socket.socket, stop: threading.Event) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536) or b"\r\n\r\n"
        path = data.split(b" ", 2)[1].decode().split("?")[0]
        if path in fast:
            body = json.dumps(fast[path]).encode()
            conn.sendall(HEAD % len(body) + body)
        else:
            stop.wait(30)

    with loopback(answer) as url:
        yield url
