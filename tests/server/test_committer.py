"""The group committer: requests waiting together share one transaction; when it fails, each is tried on its own,
so one request's fault fails only that request, and a failure of the store itself (a write lock another process
holds) is answered to every request without each waiting it out in turn."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from afteraction.errors import StoreError
from afteraction.model import Event
from afteraction.server.committer import Committer
from afteraction.store import sqlite_connection
from afteraction.store.sqlite import SQLiteStore
from afteraction.store.sqlite_events import SQLiteEvents
from tests.store.test_events import event


class Watched(SQLiteEvents):
    """The SQLite event store, noting the tenants of each transaction tried. A request of tenant ``gate`` waits for
    ``opened`` (so that the requests after it wait together); one of tenant ``poison`` cannot be stored (its own
    fault, as a request the store refuses)."""

    def __init__(self, path: Path) -> None:
        super().__init__(SQLiteStore(path))
        self.tried: list[list[str]] = []
        self.opened = threading.Event()

    def add_groups(self, groups: Sequence[tuple[str, Sequence[Event]]]) -> list[list[bool]]:
        tenants = [tenant for tenant, _ in groups]
        self.tried.append(tenants)
        if "gate" in tenants:
            assert self.opened.wait(10)
        if "poison" in tenants:
            raise StoreError("an event of tenant poison cannot be stored")
        return super().add_groups(groups)


async def together(committer: Committer, store: Watched, tenants: list[str]) -> list[list[bool] | BaseException]:
    """Send ``tenants``' requests while the writer is inside the first one, so the rest wait as one group."""
    first = asyncio.ensure_future(committer.add(tenants[0], [event("e0")]))
    while not store.tried:
        await asyncio.sleep(0.005)
    rest = [asyncio.ensure_future(committer.add(tenant, [event(f"e{i}")])) for i, tenant in enumerate(tenants[1:], 1)]
    await asyncio.sleep(0.05)  # every request queued before the first one ends
    store.opened.set()
    return await asyncio.gather(first, *rest, return_exceptions=True)


def test_one_requests_fault_fails_that_request_only(tmp_path: Path) -> None:
    store = Watched(tmp_path / "events.db")
    committer = Committer(store)
    try:
        found = asyncio.run(together(committer, store, ["gate", "acme", "poison", "globex", "initech"]))
    finally:
        committer.close()
        store.close()
    assert found[0] == [True] and found[1] == [True] and found[3] == [True] and found[4] == [True]
    assert isinstance(found[2], StoreError) and "poison" in str(found[2])
    assert store.tried == [
        ["gate"],
        ["acme", "poison", "globex", "initech"],
        ["acme"],
        ["poison"],
        ["globex"],
        ["initech"],
    ]


def test_a_lock_held_elsewhere_is_answered_to_every_request_without_each_waiting_it_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each try waits the busy timeout for the lock; before, the group's eight requests were tried one after the
    other and the last answered after nine timeouts (20 s seen, 5 s each). Now after the group's try and two alone."""
    monkeypatch.setattr(sqlite_connection, "BUSY_TIMEOUT_MS", 200)
    store = Watched(tmp_path / "events.db")
    store.opened.set()
    committer = Committer(store)
    other = sqlite3.connect(tmp_path / "events.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's long write
    try:
        found = asyncio.run(together(committer, store, [f"t{i}" for i in range(9)]))
    finally:
        other.execute("ROLLBACK")
        other.close()
        committer.close()
        store.close()
    assert all(isinstance(result, StoreError) and "locked" in str(result) for result in found), found
    assert store.tried == [["t0"], [f"t{i}" for i in range(1, 9)], ["t1"], ["t2"]]


def test_requests_waiting_together_share_one_transaction(tmp_path: Path) -> None:
    store = Watched(tmp_path / "events.db")
    committer = Committer(store)
    try:
        found = asyncio.run(together(committer, store, ["gate", "acme", "acme", "globex"]))
        again = asyncio.run(committer.add("acme", [event("e1"), event("e9")]))
    finally:
        committer.close()
        store.close()
    assert found == [[True], [True], [True], [True]] and again == [False, True]
    assert store.tried == [["gate"], ["acme", "acme", "globex"], ["acme"]]
