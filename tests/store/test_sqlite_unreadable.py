"""A record stored unreadable (its JSON damaged by a hand, a bug or a newer version) in the SQLite
store: ``missing_vectors`` passes over it (logged once, listed to a caller that asks) and reads on
past it, so every other record still gets its vector; the record holds the model's mark back, so
once it is mended it is found again."""

from __future__ import annotations

import json
import logging
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from afteraction.store import SQLiteStore
from afteraction.store.base import StoredVector
from tests.conformance.builders import experience
from tests.store.test_sqlite_vectors import MODEL


def damage(path: Path, *ids: str) -> dict[str, str]:
    """Break the stored JSON of ``ids``; what it was, to mend them with."""
    with closing(sqlite3.connect(path)) as db, db:
        listed = json.dumps(list(ids))
        kept = dict(
            db.execute("SELECT id, data FROM experiences WHERE id IN (SELECT value FROM json_each(?))", (listed,))
        )
        db.executemany("UPDATE experiences SET data = '{broken' WHERE id = ?", [(id,) for id in ids])
    return kept


def pages(store: SQLiteStore, limit: int, passed: list[tuple[str, str, str]]) -> list[list[str]]:
    found, after = [], None
    while page := store.missing_vectors(MODEL, limit=limit, after=after, unreadable=passed):
        found.append([e.id for e in page])
        after = (page[-1].scope.tenant, page[-1].id)
    return found


def test_an_unreadable_record_is_passed_over_and_the_pages_go_on_past_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    store.put_many([experience(f"m{i}") for i in range(8)])
    damage(path, "m2", "m3", "m7")  # two in a row across a page's end, and the last one
    passed: list[tuple[str, str, str]] = []
    with caplog.at_level(logging.WARNING, logger="afteraction.store"):
        assert pages(store, 2, passed) == [["m0", "m1"], ["m4", "m5"], ["m6"]]
        assert pages(store, 2, []) == [["m0", "m1"], ["m4", "m5"], ["m6"]]  # a second pass: the same
    assert {(tenant, id) for tenant, id, _ in passed} == {("acme", "m2"), ("acme", "m3"), ("acme", "m7")}
    assert all(f"a record stored in {path} cannot be read" in why for _, _, why in passed)
    said = sorted(r.getMessage().split("'")[1] for r in caplog.records if "passed over" in r.getMessage())
    assert said == ["m2", "m3", "m7"]  # once each, however often read
    assert store.count_missing_vectors(MODEL) == 8
    store.close()


def test_an_unreadable_record_holds_the_mark_back_and_is_found_once_mended(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    store.put_many([experience(f"m{i}") for i in range(4)])
    kept = damage(path, "m1")
    readable = store.missing_vectors(MODEL)
    assert [e.id for e in readable] == ["m0", "m2", "m3"]
    vectors = [StoredVector("acme", e.id, e.revision, MODEL, [1.0, 0.0]) for e in readable]
    assert store.put_vectors(vectors) == 3
    assert store.missing_vectors(MODEL) == [] and store.missing_vectors(MODEL, limit=1) == []
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE experiences SET data = ? WHERE id = 'm1'", (kept["m1"],))
    other = SQLiteStore(path)  # another process
    assert [e.id for e in other.missing_vectors(MODEL)] == ["m1"]
    other.close()
    store.close()
