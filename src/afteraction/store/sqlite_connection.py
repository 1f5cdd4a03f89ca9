"""Opening the SQLite store's connections: the writer's (the file checked, switched to WAL, tuned
and migrated) and, after it, the readers' (tuned, ``query_only``).

The driver never opens a transaction by itself (``isolation_level=None``).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from afteraction.errors import StoreError
from afteraction.store.sqlite_schema import MIGRATIONS, check_content, check_file, inspect, migrate

__all__ = ["BUSY_TIMEOUT_MS", "connect", "connect_reader", "locked"]

BUSY_TIMEOUT_MS = 5_000
_PRAGMAS = (
    "synchronous = NORMAL",
    "foreign_keys = ON",
    "cache_size = -32000",
    "temp_store = MEMORY",
    "mmap_size = 268435456",
)


def locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def _use_wal(db: sqlite3.Connection, where: str) -> None:
    """Switch to WAL. Two connections switching a new file at once can make one fail at once
    with "locked" (SQLite does not wait there, to avoid a deadlock), so retry until the timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as exc:
            if not locked(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
    if str(mode).lower() != "wal":
        raise StoreError(f"{where}: cannot switch to WAL journal mode (it stays {mode!r})")


def _open(where: str, *, existing: bool = False) -> sqlite3.Connection:
    """A connection to ``where``; with ``existing``, only to a file that is there (never creates one)."""
    target = f"file:{quote(where)}?mode=rw" if existing else where
    try:
        db = sqlite3.connect(
            target, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False, uri=existing
        )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {where}: {exc}") from exc
    return db


def _failed(db: sqlite3.Connection, where: str, exc: sqlite3.DatabaseError) -> StoreError:
    db.close()
    if locked(exc):
        return StoreError(f"{where} stayed locked by another connection for {BUSY_TIMEOUT_MS} ms")
    text = str(exc)
    if "readonly" in text or "unable to open" in text:
        return StoreError(
            f"{where} cannot be written ({exc}): check the permissions of the file and its directory,"
            " and that its filesystem is not mounted read-only"
        )
    if "disk is full" in text or "disk I/O error" in text:
        return StoreError(f"{where} cannot be written ({exc}): check the space and health of its disk")
    return StoreError(f"{where} is corrupted or not an SQLite database ({exc}); restore or move it")


@contextmanager
def _closed_on_failure(db: sqlite3.Connection, where: str) -> Iterator[None]:
    """Setting up ``db``: on any failure it is closed; an SQLite one is a StoreError saying what to do (``_failed``)."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        raise _failed(db, where, exc) from exc
    except BaseException:
        db.close()
        raise


def _tune(db: sqlite3.Connection) -> None:
    for pragma in _PRAGMAS:
        db.execute(f"PRAGMA {pragma}")


def connect(path: str | Path) -> sqlite3.Connection:
    """The store's writing connection: the file checked, switched to WAL and migrated."""
    where = str(path)
    if isinstance(path, Path):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the directory of {where}: {exc}") from exc
        check_file(path)
    db = _open(where)
    with _closed_on_failure(db, where):
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if isinstance(path, Path):
            check_content(db, where)
        db.execute("BEGIN")  # one snapshot: another process may be migrating this file right now
        try:
            version = inspect(db, where)
        finally:
            if db.in_transaction:
                db.execute("ROLLBACK")
        if isinstance(path, Path):
            _use_wal(db, where)
        _tune(db)
        if version < len(MIGRATIONS):  # the write lock only when there is something to migrate: a long write of
            migrate(db, where)  # another process (an import) would otherwise keep every reader from opening
    return db


def connect_reader(path: Path) -> sqlite3.Connection:
    """A connection that only reads the store at ``path``, which ``connect`` opened before (so the
    file is checked, in WAL and migrated); never one that creates the file (it was deleted)."""
    where = str(path)
    db = _open(where, existing=True)
    with _closed_on_failure(db, where):
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        db.execute("PRAGMA query_only = ON")
        _tune(db)
    return db
