"""The SQLite store's connections (``store/sqlite_access.py``): reads on connections of their own
beside the one writer, so neither waits for the other in one process; what a read sees; close;
a forked child."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from afteraction.errors import StoreError
from afteraction.model import Event
from afteraction.store import SQLiteStore, sqlite_access, sqlite_events, sqlite_terms
from afteraction.store.base import StoredVector
from afteraction.store.events import open_events
from afteraction.store.sqlite_vectors import IndexPolicy
from tests.conformance.builders import NOW, SCOPE, experience
from tests.server.test_ingest import event
from tests.test_fork import in_child

#: Seconds a write may take while a read is held (it takes milliseconds; the machine may be loaded).
BOUND = 5.0
MODEL = "test-model@1"
DIM = 16
COUNT = "SELECT count(*) FROM experiences"


def started(work: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    """``work()`` running in a thread; the list gets what it returned or raised."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def unit(seed: int) -> list[float]:
    row = np.random.default_rng(seed).standard_normal(DIM)
    return [float(x) for x in row / np.linalg.norm(row)]


def stored(id: str, seed: int) -> StoredVector:
    return StoredVector(SCOPE.tenant, id, 1, MODEL, unit(seed))


def word(*numbers: int) -> str:
    """A word no other record holds, made of letters (the stemmer keeps it whole)."""
    return "zq" + "".join(chr(ord("a") + int(d)) for n in numbers for d in f"{n:02d}")


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    return SQLiteStore(tmp_path / "store.db")


def test_a_write_returns_while_a_read_holds_its_snapshot(store: SQLiteStore) -> None:
    store.put(experience("before"))
    with store._reading() as db:
        db.execute("BEGIN")
        assert db.execute(COUNT).fetchone()[0] == 1  # the read's snapshot has started
        writer, outcome = started(lambda: store.put(experience("during")))
        writer.join(BOUND)
        returned = not writer.is_alive()
        assert db.execute(COUNT).fetchone()[0] == 1  # the read still sees its snapshot
        db.execute("ROLLBACK")
    writer.join()
    assert returned, "put waited for a read"
    assert outcome == [True]
    assert store.get(SCOPE, "during") is not None
    store.close()


def test_a_write_returns_while_a_vector_search_holds_the_index(store: SQLiteStore) -> None:
    store.vectors.policy = IndexPolicy(ann_from=10**9)
    store.put(experience("first"))
    store.put_vectors([stored("first", 1)])
    with store.vectors.lock:  # what a vector search holds while its index catches up and it searches

        def write() -> int:
            store.put(experience("second"))
            return store.put_vectors([stored("second", 2)])

        writer, outcome = started(write)
        writer.join(BOUND)
        returned = not writer.is_alive()
    writer.join()
    assert returned, "a write waited for the vector index"
    assert outcome == [1]
    found = store.search_vector(SCOPE, MODEL, unit(2), now=NOW, limit=1)
    assert [c.experience.id for c in found] == ["second"]
    store.close()


def test_every_thread_reads_its_own_writes_and_those_finished_before(store: SQLiteStore) -> None:
    """Read connections come from a pool and go back to it: none may keep an old snapshot."""
    missed: list[str] = []

    def work(n: int) -> None:
        for i in range(15):
            id = f"t{n}-{i}"
            store.put(experience(id, task=f"Refund stuck {word(n, i)}"))
            store.put_vectors([stored(id, 100 * n + i)])
            if store.get(SCOPE, id) is None:
                missed.append(f"get {id}")
            if id not in {c.experience.id for c in store.search_text(SCOPE, [word(n, i)], now=NOW)}:
                missed.append(f"text {id}")
            nearest = store.search_vector(SCOPE, MODEL, unit(100 * n + i), now=NOW, limit=1)
            if [c.experience.id for c in nearest] != [id]:
                missed.append(f"vector {id}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert missed == []
    assert store.count(SCOPE) == 60
    assert len(store.search_vector(SCOPE, MODEL, unit(0), now=NOW, limit=100)) == 60
    store.close()


def test_vector_searches_on_many_readers_never_take_a_write_for_a_restore(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search whose snapshot were older than the index (``max(seq)`` below its watermark)
    would reload it as after a restore: snapshots start under the index's lock, so they only
    move forward."""
    store.put_many([experience(f"e{i}") for i in range(20)])
    store.put_vectors([stored(f"e{i}", i) for i in range(20)])
    opened: list[str] = []
    open_entry = store.vectors._open

    def counted(*args: Any, **kwargs: Any) -> Any:
        opened.append(args[2])
        return open_entry(*args, **kwargs)

    monkeypatch.setattr(store.vectors, "_open", counted)
    stop = threading.Event()
    failures: list[BaseException] = []

    def search(seed: int) -> None:
        while not stop.is_set():
            try:
                store.search_vector(SCOPE, MODEL, unit(seed), now=NOW, limit=5)
            except BaseException as exc:
                failures.append(exc)
                return

    searchers = [threading.Thread(target=search, args=(n,)) for n in range(3)]
    for thread in searchers:
        thread.start()
    for i in range(20, 80):
        store.put(experience(f"e{i}"))
        store.put_vectors([stored(f"e{i}", i)])
    stop.set()
    for thread in searchers:
        thread.join()
    assert failures == []
    assert opened == [MODEL]
    assert len(store.search_vector(SCOPE, MODEL, unit(0), now=NOW, limit=100)) == 80
    store.close()


def test_a_read_never_writes_and_fails_as_the_store(store: SQLiteStore) -> None:
    store.put(experience("kept"))
    failed = f"the SQLite store at {store.path} failed: attempt to write a readonly database"
    with pytest.raises(StoreError, match=failed), store._reading() as db:
        db.execute("DELETE FROM experiences")
    assert store.get(SCOPE, "kept") is not None
    store.close()


def test_close_with_a_read_in_use_closes_its_connection_when_the_read_ends(store: SQLiteStore) -> None:
    store.put(experience("one"))
    assert store.get(SCOPE, "one") is not None  # a reader left idle: close closes it at once
    closed = f"the store at {store.path} is closed"
    with store._reading() as db:
        assert db.execute(COUNT).fetchone()[0] == 1
        closer, outcome = started(store.close)
        closer.join(BOUND)
        assert not closer.is_alive(), "close waited for a read"  # (leaving the block lets it end)
        assert db.execute(COUNT).fetchone()[0] == 1  # the read in use goes on
        with pytest.raises(StoreError, match=closed):
            store.get(SCOPE, "one")
    assert outcome == [None]
    with pytest.raises(sqlite3.ProgrammingError):  # closed when its read ended
        db.execute("SELECT 1")
    for read in (lambda: store.search_text(SCOPE, ["refund"], now=NOW), lambda: store.count(SCOPE)):
        with pytest.raises(StoreError, match=closed):
            read()
    with pytest.raises(StoreError, match=closed):
        store.put(experience("two"))
    assert not Path(f"{store.path}-wal").exists()  # every connection closed: the last one removed the WAL
    store.close()  # again: nothing to do


def test_a_memory_store_reads_and_writes_through_its_one_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """``:memory:`` lives in one connection: reads share it, and the writer clears the term counts
    read through it (data_version misses a connection's own commits)."""
    monkeypatch.setattr(sqlite_terms, "BUDGET", (1, 1))
    monkeypatch.setattr(sqlite_terms, "PER_RESULT", 0)
    store = SQLiteStore(":memory:")
    with store._reading() as read:
        assert not store._connections._lock.acquire(blocking=False)  # a read holds the writer's lock
    with store._connections.writer() as writer:
        assert read is writer.db
    store.put_many([experience(f"r{i}", task="Refund retry loop", lesson="Back off.") for i in range(4)])
    store.put(experience("lock", task="Refund lock held", lesson="Wait for the lock."))
    stems = ["refund", "lock"]
    with store._connections.reading() as held:
        assert store._split(held, stems, 50) == (["lock"], ["refund"])
    store.put_many([experience(f"l{i}", task="Lock contention", lesson="Lock wait.") for i in range(9)])
    with store._connections.reading() as held:
        assert store._split(held, stems, 50) == (["refund"], ["lock"])
    assert len(store.search_text(SCOPE, stems, now=NOW, limit=100)) == 14
    store.close()
    with pytest.raises(StoreError, match="the store at :memory: is closed"):
        store.count(SCOPE)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="this platform has no fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_reads_and_writes_on_connections_of_its_own(store: SQLiteStore) -> None:
    store.put(experience("parent"))
    store._configure("synchronous = FULL")  # as the event store sets it
    with store._connections.writer() as writer:
        parent_writer = id(writer.db)
    with store._reading() as db:
        parent_reader = id(db)

    def child() -> list[Any]:
        with store._reading() as db:
            reader = id(db)
        seen = store.get(SCOPE, "parent") is not None
        written = store.put(experience("child"))
        with store._connections.writer() as writer:
            mine = id(writer.db)
            synchronous = writer.db.execute("PRAGMA synchronous").fetchone()[0]
        return [seen, written, reader != parent_reader, mine != parent_writer, synchronous]

    assert in_child(child) == [True, True, True, True, 2]  # FULL kept on the child's writer
    assert store.get(SCOPE, "child") is not None  # the same file
    with store._connections.writer() as writer:
        assert id(writer.db) == parent_writer  # the parent keeps its own
    store.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="this platform has no fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_read_the_parent_began_before_a_fork_ends_in_the_child_without_its_connection_kept(
    store: SQLiteStore,
) -> None:
    store.put(experience("parent"))
    reading = store._reading()
    db = reading.__enter__()  # a read in flight when the process forks

    def child() -> list[Any]:
        reading.__exit__(None, None, None)  # the child leaves the read the parent began
        idle = [id(held.db) for held in store._connections._idle]
        return [id(db) in idle, store.count(SCOPE)]

    assert in_child(child) == [False, 1]  # not given to the child's next reads, which have their own
    reading.__exit__(None, None, None)
    assert db in [held.db for held in store._connections._idle]  # the parent's read gave it back
    store.close()


def _remove(path: Path) -> None:
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        name.unlink(missing_ok=True)


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_write_after_the_file_was_deleted_or_replaced_is_refused_not_lost(tmp_path: Path, how: str) -> None:
    """SQLite goes on writing into a file that was deleted (or moved over by a restore) while open:
    every write "succeeded", and all of them were gone with the file at close."""
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    store.put(experience("before"))
    if how == "deleted":
        _remove(path)
    else:
        restored = SQLiteStore(tmp_path / "restored.db")
        restored.put(experience("restored"))
        restored.close()
        _remove(path)
        os.replace(tmp_path / "restored.db", path)
    with pytest.raises(StoreError, match="was deleted or replaced since the store opened it: nothing was read or"):
        store.put(experience("after"))
    store.close()
    again = SQLiteStore(path)
    assert [e.id for e in again.iter_all()] == ([] if how == "deleted" else [experience("restored").id])
    again.put(experience("after"))  # opened again: the file there now is the one written
    assert experience("after").id in {e.id for e in again.iter_all()}
    again.close()


def test_a_write_to_the_file_still_in_place_is_not_held_up(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    for n in range(3):
        store.put(experience(f"kept-{n}"))
    assert len(list(store.iter_all())) == 3
    store.close()


def test_a_backup_restored_over_an_open_store_is_left_whole(tmp_path: Path) -> None:
    """A reader opened after the move paired the restored file with the old file's -wal, and at
    close checkpointed the old pages into it: the restored file was malformed."""
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    for n in range(20):
        store.put(experience(f"kept-{n}"))
    backup = tmp_path / "backup.db"
    with closing(sqlite3.connect(path)) as source, closing(sqlite3.connect(backup)) as target:
        source.backup(target)
    for n in range(20):
        store.put(experience(f"later-{n}"))
    os.replace(backup, path)
    with pytest.raises(StoreError, match="was deleted or replaced since the store opened it"):
        store.search_text(SCOPE, ["kept"], now=NOW, limit=5)
    store.close()
    with sqlite3.connect(f"file:{path}?immutable=1", uri=True) as restored:
        assert restored.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    again = SQLiteStore(path)
    assert sorted(e.id for e in again.iter_all()) == sorted(experience(f"kept-{n}").id for n in range(20))
    again.close()


def test_a_read_after_the_file_was_deleted_says_so_and_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    store.put(experience("before"))
    _remove(path)
    with pytest.raises(StoreError, match="was deleted or replaced since the store opened it"):
        list(store.iter_all())
    assert not path.exists()  # a reader opened now would have made an empty database there
    store.close()
    assert not path.exists()


@contextmanager
def _endless_readers(path: Path) -> Iterator[None]:
    """Two raw connections taking turns so that one of them is always in a read transaction (the
    shape of searches that never stop)."""
    stop = threading.Event()

    def readers() -> None:
        first, second = sqlite3.connect(path, isolation_level=None), sqlite3.connect(path, isolation_level=None)
        first.execute("BEGIN")
        first.execute("SELECT count(*) FROM experiences").fetchone()
        while not stop.is_set():
            for holding, other in ((first, second), (second, first)):
                other.execute("BEGIN")
                other.execute("SELECT count(*) FROM experiences").fetchone()  # the other starts before this ends
                holding.execute("COMMIT")
                time.sleep(0.002)
        for db in (first, second):
            if db.in_transaction:
                db.execute("COMMIT")
            db.close()

    thread = threading.Thread(target=readers)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _wal_after_writes_beside_endless_readers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int) -> int:
    """The WAL's size after 300 writes and one more a second later, beside endless readers."""
    monkeypatch.setattr(sqlite_access, "WAL_LIMIT", limit)
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    store.put(experience("seed"))
    with _endless_readers(path):
        for n in range(300):
            store.put(experience(f"w-{n}", lesson="x" * 2000))
        time.sleep(1.05)  # past the once-a-second spacing of the truncations
        store.put(experience("last"))  # the write after which the WAL is truncated, if it can be
    size = os.stat(f"{path}-wal").st_size
    store.close()
    return size


def test_the_wal_stays_bounded_while_readers_never_pause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limit = 256 * 1024
    grown = _wal_after_writes_beside_endless_readers(tmp_path / "a", monkeypatch, limit=1 << 40)  # never truncated
    bounded = _wal_after_writes_beside_endless_readers(tmp_path / "b", monkeypatch, limit=limit)
    assert grown > 8 * limit  # what the readers alone do to it
    assert bounded < limit  # truncated after the last write (a checkpoint can wait for readers to move on)


def test_the_event_stores_checkpoint_thread_bounds_the_wal_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The service's event store checkpoints in a thread of its own (its writer never does): there,
    not in the writer, the WAL is truncated past the limit."""
    limit = 256 * 1024
    monkeypatch.setattr(sqlite_access, "WAL_LIMIT", limit)
    truncations: list[int] = []  # the WAL's size each time the thread truncated it (it may do so mid-writes)

    def truncate(db: sqlite3.Connection) -> None:
        truncations.append(os.stat(f"{path}-wal").st_size)
        sqlite_access.truncate_wal(db)

    monkeypatch.setattr(sqlite_events, "truncate_wal", truncate)
    path = tmp_path / "events.db"
    events = open_events(str(path), checkpoint_every=0.05)
    with _endless_readers(path):
        for n in range(40):  # ~1.6 MB of events: without truncating, the readers keep the WAL at least that large
            batch = [Event.from_dict(event(f"e-{n}-{i}", payload={"text": "y" * 2000})) for i in range(20)]
            events.add_many("dev", batch)
        time.sleep(0.5)  # a few rounds of the checkpoint thread
        bounded = os.stat(f"{path}-wal").st_size
    events.close()
    assert truncations and all(size > limit for size in truncations) and bounded < limit
