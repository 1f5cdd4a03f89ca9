"""An erasure in the SQLite store leaves nothing of what it deleted in the file nor in its WAL: a
forgotten lesson's terms leave the FTS5 index's older segments (a delete only appended a marker),
and the WAL is truncated after every forget, user erasure, session delete and prune while the
store stays open (a checkpoint alone leaves the old frames in the ``-wal`` file)."""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import datetime, timezone
from pathlib import Path

import pytest

from afteraction.model import Scope
from afteraction.store import SQLiteStore, sqlite_access
from afteraction.store.sqlite_events import SQLiteEvents
from tests.conformance.builders import NOW, SCOPE, experience
from tests.store.test_events import event

SECRET = "zzvandersloot"  # a word (and its own stem) found nowhere else
MARK = SECRET[2:]  # what stays of it when the index keeps only the end of a term after the one before
HENRIETTA = Scope(tenant=SCOPE.tenant, app=SCOPE.app, project=SCOPE.project, user="henrietta")


def lessons(path: Path) -> SQLiteStore:
    """A store whose text index has several segments, the secret's lesson in the oldest."""
    store = SQLiteStore(path)
    store.put(experience("secret", lesson=f"Refund for Henrietta at 12 {SECRET} is stuck.", scope=HENRIETTA))
    for n in range(30):  # one write each: a segment each, merged now and then (automerge)
        store.put(experience(f"other-{n}", lesson=f"Unrelated lesson number {n} about refunds."))
    return store


def sessions(path: Path) -> SQLiteEvents:
    """The service's event store (its own checkpoint thread), the secret in an old session's event."""
    events = SQLiteEvents(SQLiteStore(path), checkpoint_every=60.0)
    said = {"text": f"Refund for Henrietta at 12 {SECRET} is stuck"}
    events.add_many("acme", [event("e1", "2025-06-01T00:00:00Z", session="old", payload=said)])
    events.add_many("acme", [event("e2", session="kept")])
    return events


def holding(path: Path, word: str) -> int:
    """How many blocks of the text index hold ``word``: its live rows, whatever the vocabulary says."""
    with closing(sqlite3.connect(path)) as db:
        sql = "SELECT count(*) FROM experiences_fts_data WHERE instr(block, ?) > 0"
        return int(db.execute(sql, (word.encode(),)).fetchone()[0])


def in_files(path: Path, word: str) -> dict[str, int]:
    """How often ``word`` is in the database file and in its WAL, byte for byte."""
    files = (path, Path(f"{path}-wal"))
    return {file.name: n for file in files if file.exists() and (n := file.read_bytes().count(word.encode()))}


FORGETS: dict[str, Callable[[SQLiteStore], object]] = {
    "forget": lambda store: store.delete(HENRIETTA, ["secret"]),
    "forget_user": lambda store: store.delete_user(SCOPE.tenant, "henrietta"),
}


@pytest.mark.parametrize("how", FORGETS)
def test_a_forgotten_lessons_terms_leave_the_text_index_and_the_file(tmp_path: Path, how: str) -> None:
    path = tmp_path / "memory.db"
    store = lessons(path)
    assert holding(path, MARK) == 1
    FORGETS[how](store)
    assert holding(path, MARK) == 0  # were live rows of an older segment, which a VACUUM keeps too
    found = store.search_text(SCOPE, ["unrelated", "7"], now=NOW, limit=1)
    assert [candidate.experience.id for candidate in found] == ["other-7"]
    store.close()
    assert in_files(path, MARK) == {} and in_files(path, "henriett") == {}


def erasure(path: Path, how: str) -> tuple[Callable[[], object], Callable[[], None]]:
    """What erases the secret (``how``) in a store opened at ``path``, and what closes that store."""
    if how in FORGETS:
        store = lessons(path)
        return lambda: FORGETS[how](store), store.close
    events = sessions(path)
    if how == "delete_sessions":
        return lambda: events.delete_sessions("acme", ["old"]), events.close
    return lambda: events.prune("acme", datetime(2026, 1, 1, tzinfo=timezone.utc)), events.close


@pytest.mark.parametrize("how", [*FORGETS, "delete_sessions", "prune"])
def test_an_erasure_leaves_nothing_in_the_wal_while_the_store_stays_open(tmp_path: Path, how: str) -> None:
    path = tmp_path / "memory.db"
    erase, close = erasure(path, how)
    assert in_files(path, MARK)
    with closing(sqlite3.connect(path, isolation_level=None)) as other:  # another process checkpoints
        assert erase()
        other.execute("PRAGMA wal_checkpoint(PASSIVE)")
        assert in_files(path, MARK) == {}, "the erased text stayed in the WAL while the store was open"
        assert os.stat(f"{path}-wal").st_size == 0
    close()


def test_an_erasure_beside_a_read_in_the_wal_succeeds_says_so_and_a_later_write_truncates(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "memory.db"
    store = lessons(path)
    with closing(sqlite3.connect(path, isolation_level=None)) as reader:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM experiences").fetchone()  # a snapshot in the WAL: no TRUNCATE finishes
        with caplog.at_level(logging.WARNING, logger="afteraction.store"):
            assert store.delete(HENRIETTA, ["secret"]) == 1  # the WAL never fails an erasure
        assert "could not truncate the WAL" in caplog.text and in_files(path, MARK)
        reader.execute("ROLLBACK")
    assert not sqlite_access._ERASING
    store._connections._next_truncate = 0.0  # tried again at most once a second: no need to wait here
    store.put(experience("later"))
    assert os.stat(f"{path}-wal").st_size == 0 and in_files(path, MARK) == {}
    store.close()


def test_a_rolled_back_erasure_leaves_no_mark_and_a_plain_write_truncates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = lessons(path)
    with pytest.raises(RuntimeError), store._writing() as db:
        sqlite_access.erasing(db)
        raise RuntimeError("rolled back")
    assert not sqlite_access._ERASING
    store.put(experience("plain"))
    assert os.stat(f"{path}-wal").st_size > 0  # a plain write leaves the WAL to the checkpoints (WAL_LIMIT)
    store.close()
