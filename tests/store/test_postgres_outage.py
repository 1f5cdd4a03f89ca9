"""A database outage: while PostgreSQL is down every call fails within a few seconds (not the pool's 30 s), naming
the real cause; ``/ready`` says not ready as fast; once it is back the same store works again, and nothing that
was acknowledged before is lost. A cluster of its own, stopped and started again in the same directory (its
socket's), so the suite's shared one is untouched. And ``/ready`` answers within its limit when the read hangs."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from starlette.testclient import TestClient

import afteraction as aa
from afteraction.errors import StoreError
from afteraction.memory import Memory
from afteraction.server import create_app
from afteraction.server.health import READY_TIMEOUT
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_events import PostgresEvents
from afteraction.store.postgres_schema import SESSIONS
from tests.pg import Cluster
from tests.store.test_events import event

pytestmark = pytest.mark.postgres

FAST = 5.0  # seconds: "a few", against the pool's 30
SCOPE = aa.Scope(tenant="acme", app="support", project="outage")


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    try:
        running = Cluster()
    except Exception as exc:  # as the suite's pg_cluster fixture does
        pytest.skip(f"cannot start a test PostgreSQL: {exc}")
    try:
        yield running
    finally:
        running.stop()


def _stop(cluster: Cluster) -> None:
    """Stop the server (fast shutdown), keeping its files: ``cluster._start()`` starts it again."""
    process = cluster._process
    assert process is not None
    process.send_signal(signal.SIGINT)
    process.wait(timeout=15)


def _timed(call: Callable[[], Any]) -> tuple[float, BaseException | None]:
    started = time.monotonic()
    try:
        call()
    except Exception as exc:
        return time.monotonic() - started, exc
    return time.monotonic() - started, None


def test_calls_fail_fast_naming_the_cause_while_the_database_is_down_and_work_again_after(cluster: Cluster) -> None:
    url = cluster.database()
    events = PostgresEvents(PostgresStore(url))
    reports: list[str] = []
    memory = Memory(events.store, embedder=None, on_error=lambda exc, where: reports.append(str(exc)))
    try:
        assert events.add_many("acme", [event("before", session="s1")]) == [True]
        memory.search("warm the pool", scope=SCOPE)
        _stop(cluster)
        calls: list[tuple[str, Callable[[], Any]]] = [
            ("add", lambda: events.add_many("acme", [event("during", session="s1")])),
            ("session", lambda: events.session("acme", "s1")),
            ("search", lambda: memory.search("fix the outage", scope=SCOPE)),
            ("get", lambda: events.store.get(SCOPE, "exp-1")),
        ]
        for name, call in calls:
            took, failed = _timed(call)
            assert took < FAST, f"{name} took {took:.1f} s"
            assert isinstance(failed, StoreError), name
            assert "cannot be reached" in str(failed) and "No such file or directory" in str(failed), str(failed)
            assert "couldn't get a connection" not in str(failed)
        started = time.monotonic()
        with memory.run("fix the outage task", scope=SCOPE) as run:  # inside a run: no raise, reported
            run.reference_block()
            run.tool("x", result="ok")
            run.check("c", passed=True)
        assert time.monotonic() - started < 2 * FAST
        assert reports and all("cannot be reached" in report for report in reports), reports
        with TestClient(create_app(events), raise_server_exceptions=False) as http:
            took, _ = _timed(lambda: http.get("/ready").raise_for_status())
            assert took < FAST and http.get("/ready").status_code == 503

        cluster._start()
        deadline = time.monotonic() + 15
        while _timed(lambda: events.session("acme", "s1"))[1] is not None:  # the pool reconnects
            assert time.monotonic() < deadline, "the store did not recover"
            time.sleep(0.2)
        assert events.add_many("acme", [event("after", session="s1")]) == [True]
        assert events.stats("acme").events == 2  # "before" kept; "during" was refused, not half-stored
        with memory.run("after the outage task", scope=SCOPE) as run:
            run.tool("x", result="ok")
            run.check("c", passed=True)
        assert run.experience is not None and memory.get(run.experience.id, scope=SCOPE) is not None
    finally:
        memory.close()
        events.close()


def test_ready_answers_within_its_limit_when_the_read_hangs(pg_cluster: Cluster, pg_url: str) -> None:
    events = PostgresEvents(PostgresStore(pg_url))
    admin = pg_cluster.url(str(psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]), "postgres")
    release = threading.Event()

    def hold() -> None:  # the sessions table locked: the ready read waits (for 20 s at most)
        with psycopg.connect(admin) as db, db.transaction():
            db.execute(f"LOCK TABLE {SESSIONS} IN ACCESS EXCLUSIVE MODE")
            locked.set()
            release.wait(20)

    locked = threading.Event()
    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(10)
        with TestClient(create_app(events), raise_server_exceptions=False) as http:
            started = time.monotonic()
            answer = http.get("/ready")
            assert time.monotonic() - started < READY_TIMEOUT + 2
            assert answer.status_code == 503
            release.set()
            holder.join()
            assert http.get("/ready").json() == {"status": "ready"}
    finally:
        release.set()
        holder.join()
        events.close()
