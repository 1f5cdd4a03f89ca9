"""The connections of one SQLite store: one that writes, under its lock, and those that read.

WAL lets readers run beside the one writer, so a read never waits for a write of this process
nor a write for a read: each read takes a connection of its own from a small pool (``PRAGMA
query_only``), and a search, a listing or the vector index catching up with new rows no longer
holds up a finished run's write. A read's snapshot starts at its first statement and ends with
the statement (or with the ``snapshot`` block): it sees every write committed before it, of this
process or another (read-your-writes), and no snapshot is kept between reads.

- The writing connection is opened first (the file checked, switched to WAL, migrated: see
  ``sqlite_connection.connect``); readers after it, when a read finds none idle. At most
  ``KEPT`` idle readers are kept.
- ``:memory:``: the database lives in one connection, so reads and writes share it, under the
  writer's lock (as every read and write did before readers had their own connections).
- The file must stay the one the writer opened: a read or a write after it was deleted, or after a
  restore moved another file over it, is a StoreError (a reader opened on the new file would pair
  it with the old file's ``-wal`` and corrupt it; a write would go into the old file, lost at close).
- The WAL stays bounded: readers that overlap without end would keep SQLite's checkpoints from ever
  starting the WAL over (it grew to 3 GB in four minutes of four searching threads beside two
  writing ones). Past ``WAL_LIMIT`` bytes, a write is followed by a TRUNCATE checkpoint that waits
  at most ``TRUNCATE_WAIT_MS`` for the readers then in the WAL, at most once a second.
- An erasure leaves nothing in the WAL: a checkpoint copies the frames into the file but leaves
  them in the ``-wal`` file (it only starts writing it over), so a deleted row's text would stay
  there until the WAL passes ``WAL_LIMIT`` or the store closes. A write transaction marked
  ``erasing`` (a forget, a user's erasure, deleted or pruned sessions) is followed by a TRUNCATE
  checkpoint, which never fails the erasure: when readers stay in the WAL it is logged, and tried
  again after the next writes (at most once a second) until it succeeds.
- ``close`` closes the writer and the idle readers at once; a reader in use is closed when its
  read ends, and every read after ``close`` is the same StoreError.
- A forked child (the process id changed) never uses its parent's connections (SQLite forbids it):
  at its first read or write it leaves them open and unused, opens its own writer (with the
  pragmas ``configure`` set; a ``:memory:`` database is the child's own copy, kept) and renews
  the locks, which a thread of the parent may have held at the fork.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from afteraction.errors import StoreError
from afteraction.store.sqlite_connection import BUSY_TIMEOUT_MS, connect, connect_reader, locked
from afteraction.store.sqlite_terms import TermCounts

__all__ = [
    "KEPT",
    "TRUNCATE_WAIT_MS",
    "WAL_LIMIT",
    "Connections",
    "Held",
    "erasing",
    "truncate_wal",
    "wal_over_limit",
]

log = logging.getLogger("afteraction.store")

KEPT = 4
#: The WAL's size past which a write is followed by a TRUNCATE checkpoint (see the module).
WAL_LIMIT = 32 << 20
#: How long that checkpoint waits for the readers still in the WAL before it gives up (until the next try).
TRUNCATE_WAIT_MS = 200
#: A forked child's copies of its parent's connections: never used, never closed (closing runs
#: SQLite's unlocking and WAL cleanup on a file the parent still uses).
_ABANDONED: list[sqlite3.Connection] = []
#: The writers whose open transaction is an erasure (``erasing``), by ``id``: ``writing`` forgets
#: each at its commit or rollback (a connection takes no weak reference).
_ERASING: set[int] = set()


@dataclass(slots=True, eq=False)
class Held:
    """A connection, and the term counts of the text search read through it (``sqlite_terms``)."""

    db: sqlite3.Connection
    counts: TermCounts = field(default_factory=TermCounts)


class Connections:
    """The writer of the store at ``path`` (opened here) and its readers."""

    def __init__(self, path: str | Path, *, forked: Callable[[], None] = lambda: None) -> None:
        self.path = path
        self.forked = forked  # what else the store renews in a forked child
        self._writer: Held | None = Held(connect(path))
        self._file = _identity(path)  # the file the writer opened: each read and write checks it is still there
        self._wal = Path(f"{path}-wal") if isinstance(path, Path) else None
        self._next_truncate = 0.0
        self._owed = False  # an erasure's TRUNCATE checkpoint failed: the next writes try it again
        self._sidecars = _sidecars(path)  # this database's -wal and -shm, as they are now
        self._settings: list[str] = []  # pragmas set on the writer after its open (``configure``)
        self._lock = threading.Lock()  # the writer's
        self._pool = threading.Lock()  # the readers' lists
        self._idle: list[Held] = []
        self._busy: set[Held] = set()
        self._closed = False
        self._pid = os.getpid()

    def failure(self, exc: sqlite3.Error) -> StoreError:
        if locked(exc):
            return StoreError(f"{self.path} stayed locked by another writer for {BUSY_TIMEOUT_MS} ms: {exc}")
        return StoreError(f"the SQLite store at {self.path} failed: {exc}")

    def _closed_error(self) -> StoreError:
        return StoreError(f"the store at {self.path} is closed")

    # writing

    @contextmanager
    def writer(self) -> Iterator[Held]:
        """The writing connection under its lock, outside any transaction (settings, tests)."""
        self._renew_if_forked()
        with self._lock:
            if self._writer is None:
                raise self._closed_error()
            try:
                yield self._writer
            except sqlite3.Error as exc:
                raise self.failure(exc) from exc

    def configure(self, *pragmas: str) -> None:
        """Set ``PRAGMA``s of the writer (kept for a writer opened again in a forked child)."""
        with self.writer() as held:
            for pragma in pragmas:
                held.db.execute(f"PRAGMA {pragma}")
            self._settings.extend(pragmas)

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``), committed at the end, rolled back on any error."""
        self._renew_if_forked()
        with self._lock:
            if self._writer is None:
                raise self._closed_error()
            db = self._writer.db
            try:
                db.execute("BEGIN IMMEDIATE")
                self._check_file()
                # Term counts read through this connection (``:memory:``): data_version misses its own commits.
                self._writer.counts.clear()
                yield db
                db.execute("COMMIT")
                if id(db) in _ERASING:
                    self._truncate_erased(db)
                else:
                    self._bound_wal(db)
            except BaseException as exc:
                if db.in_transaction:
                    with suppress(sqlite3.Error):  # the original error is the one to report
                        db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise self.failure(exc) from exc
                raise
            finally:
                _ERASING.discard(id(db))

    def _check_file(self) -> None:
        """StoreError when the path no longer names the file the writer opened: deleted or replaced
        (a restore moved over it; see the module)."""
        if self._file is not None and _identity(self.path) != self._file:
            raise StoreError(
                f"{self.path} was deleted or replaced since the store opened it: nothing was read or written; "
                "open the store again (a restored file is then the one used)"
            )

    def checkpoint_elsewhere(self) -> None:
        """The writer no longer checkpoints, nor bounds the WAL: a thread of the caller's does both
        (``sqlite_events``: so that a checkpoint's fsyncs never stall a commit). An erasure's commit
        is still followed by its TRUNCATE checkpoint on the writer (rare, and asked for)."""
        self.configure("wal_autocheckpoint = 0")
        self._wal = None

    def _bound_wal(self, db: sqlite3.Connection) -> None:
        """A TRUNCATE checkpoint when the WAL has passed ``WAL_LIMIT``, or when an erasure's failed
        (see the module), at most once a second; never raises."""
        if time.monotonic() < self._next_truncate:
            return
        if not self._owed and (self._wal is None or not wal_over_limit(self._wal)):
            return
        self._next_truncate = time.monotonic() + 1.0
        if truncate_wal(db):
            self._owed = False

    def _truncate_erased(self, db: sqlite3.Connection) -> None:
        """The TRUNCATE checkpoint that follows an erasure's commit; when readers stay in the WAL,
        logged and owed to the next writes (see the module). Never raises."""
        if not isinstance(self.path, Path):  # :memory: has no WAL
            return
        self._next_truncate = time.monotonic() + 1.0
        self._owed = not truncate_wal(db)
        if self._owed:
            log.warning(
                "could not truncate the WAL of %s after an erasure (a read was still in it): the deleted rows "
                "stay in its -wal file until a later write truncates it (tried at most once a second) or the "
                "store closes",
                self.path,
            )

    # reading

    @contextmanager
    def reading(self) -> Iterator[Held]:
        """A connection to read through, each statement its own snapshot."""
        if not isinstance(self.path, Path):
            with self.writer() as held:
                yield held
            return
        self._renew_if_forked()
        held = self._take()
        try:
            yield held
        except sqlite3.Error as exc:
            raise self.failure(exc) from exc
        finally:
            self._give_back(held)

    @contextmanager
    def snapshot(self) -> Iterator[Held]:
        """A connection to read through, every statement of the block in one snapshot."""
        with self.reading() as held:
            held.db.execute("BEGIN")
            try:
                yield held
            finally:
                if held.db.in_transaction:  # only read: ending it either way releases the snapshot
                    with suppress(sqlite3.Error):
                        held.db.execute("ROLLBACK")

    def _take(self) -> Held:
        with self._pool:
            if self._closed:
                raise self._closed_error()
        self._check_file()
        with self._pool:
            if self._closed:
                raise self._closed_error()
            if self._idle:
                held = self._idle.pop()
                self._busy.add(held)
                return held
        assert isinstance(self.path, Path)
        held = Held(connect_reader(self.path))  # outside the lock: another read need not wait for the open
        with self._pool:
            if not self._closed:
                self._busy.add(held)
                return held
        held.db.close()
        raise self._closed_error()

    def _give_back(self, held: Held) -> None:
        self._renew_if_forked()
        with self._pool:
            ours = held in self._busy  # not when the process forked between taking and giving back
            self._busy.discard(held)
        if not ours:
            _ABANDONED.append(held.db)
            return
        if held.db.in_transaction:  # a snapshot is never kept between reads
            with suppress(sqlite3.Error):
                held.db.execute("ROLLBACK")
        with self._pool:
            if not self._closed and len(self._idle) < KEPT and not held.db.in_transaction:
                self._idle.append(held)
                return
        held.db.close()

    # closing, forking

    def close(self, first: Callable[[sqlite3.Connection], None]) -> None:
        """Close every connection (a reader in use when its read ends), after ``first(writer)``."""
        self._renew_if_forked()
        with self._lock:
            with self._pool:
                self._closed = True
                idle, self._idle = self._idle, []
            for held in idle:
                held.db.close()
            if self._writer is not None:
                first(self._writer.db)
                with suppress(sqlite3.Error):  # closing anyway
                    self._writer.db.execute("PRAGMA optimize")
                self._writer.db.close()
                self._writer = None
            self._drop_stale_sidecars()

    def _drop_stale_sidecars(self) -> None:
        """When the file was deleted or replaced while open, SQLite closes without checkpointing and
        leaves this database's -wal and -shm at the path, where the next open would apply them to the
        file there now (a restored backup: mixed with, or corrupted by, the old pages). Remove them,
        but only while they are still the very files this store used (another process may have
        made its own since)."""
        if self._file is None or _identity(self.path) == self._file:
            return
        for sidecar, identity in self._sidecars.items():
            if identity != (0, 0) and _identity(sidecar) == identity:
                with suppress(OSError):
                    sidecar.unlink()

    def _renew_if_forked(self) -> None:
        if self._pid == os.getpid():
            return
        old = writer = self._writer
        if isinstance(self.path, Path) and old is not None:
            writer = Held(connect(self.path))  # first: when it fails, the next call tries again
            for pragma in self._settings:
                writer.db.execute(f"PRAGMA {pragma}")
            _ABANDONED.append(old.db)
            self._file = _identity(self.path)
            self._sidecars = _sidecars(self.path)
        _ABANDONED.extend(held.db for held in (*self._idle, *self._busy))
        self._writer, self._idle, self._busy = writer, [], set()
        self._lock, self._pool = threading.Lock(), threading.Lock()
        self._pid = os.getpid()
        self.forked()


def wal_over_limit(wal: Path) -> bool:
    """Whether the WAL file ``wal`` has passed ``WAL_LIMIT`` (False when there is none)."""
    try:
        return os.stat(wal).st_size > WAL_LIMIT
    except OSError:
        return False


def erasing(db: sqlite3.Connection) -> None:
    """Mark the write transaction open on ``db`` (inside ``Connections.writing``) as an erasure: its
    commit is followed by a TRUNCATE checkpoint, so that the deleted rows leave the ``-wal`` file
    too (see the module)."""
    _ERASING.add(id(db))


def truncate_wal(db: sqlite3.Connection) -> bool:
    """A TRUNCATE checkpoint through ``db``, waiting at most ``TRUNCATE_WAIT_MS`` for the readers in
    the WAL (it gives up until the next try when they stay): whether the WAL was emptied. Never raises."""
    done = False
    with suppress(sqlite3.Error):
        db.execute(f"PRAGMA busy_timeout = {TRUNCATE_WAIT_MS}")
        try:
            busy, *_ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            done = busy == 0
        finally:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return done


def _identity(path: str | Path) -> tuple[int, int] | None:
    """The device and inode ``path`` names now (None for ``:memory:``, ``(0, 0)`` when missing)."""
    if not isinstance(path, Path):
        return None
    try:
        found = os.stat(path)
    except OSError:
        return (0, 0)
    return (found.st_dev, found.st_ino)


def _sidecars(path: str | Path) -> dict[Path, tuple[int, int] | None]:
    """The -wal and -shm files of the database at ``path``, each with the file it names now."""
    if not isinstance(path, Path):
        return {}
    return {sidecar: _identity(sidecar) for sidecar in (Path(f"{path}-wal"), Path(f"{path}-shm"))}
