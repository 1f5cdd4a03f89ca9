"""Deleting records in the SQLite store, beyond the shared contract: their FTS5 and vector rows
go in the same transaction, the ANN index never returns them (in this process, after reopening,
and in another store that had the index loaded), and the saved index goes with them
(``test_sqlite_forget_index``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from afteraction.store import SQLiteStore
from afteraction.store.base import StoredVector
from tests.conformance.builders import SCOPE, experience
from tests.store.test_sqlite_vectors import MODEL, SMALL_ANN, entry, fill, kind, top, unit_rows

GONE = [f"e{i:05d}" for i in range(0, 120, 3)]  # 40 of the 120, the newest vector's record too


def rows(path: Path, sql: str) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute(sql).fetchone()[0])


def test_a_deleted_records_text_and_vector_rows_go_with_it(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    store.put_many([experience("a", lesson="Rotate the expired zanzibar token."), experience("b")])
    store.put_vectors([StoredVector("acme", "a", 1, MODEL, [1.0, 0.0])])
    assert store.delete(SCOPE, ["a"]) == 1
    store.close()
    assert rows(path, "SELECT count(*) FROM experiences_fts WHERE experiences_fts MATCH 'zanzibar'") == 0
    assert rows(path, "SELECT count(*) FROM experiences_fts_terms WHERE term = 'zanzibar'") == 0
    assert rows(path, "SELECT count(*) FROM experiences_fts") == 1
    assert rows(path, "SELECT count(*) FROM vectors") == 0


def test_the_ann_index_never_returns_a_deleted_record_and_is_built_again_without_it(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    data = fill(store, 120)
    assert top(store, data[0])[0] == "e00000" and kind(store) == "ann"
    assert store.delete(SCOPE, [*GONE, "e00119"]) == 41
    kept = [i for i in range(120) if f"e{i:05d}" not in {*GONE, "e00119"}]
    for i in (0, 3, 119, 7):
        found = top(store, data[i], limit=20)
        assert not set(found) & {*GONE, "e00119"}
        assert found[:5] == [f"e{kept[j]:05d}" for j in np.argsort(-(data[kept] @ data[i]), kind="stable")[:5]]
    assert len(entry(store).index) == 79  # type: ignore[attr-defined]
    store.close()
    assert rows(path, "SELECT count(*) FROM vectors") == 79

    reopened = SQLiteStore(path, vector_index=SMALL_ANN)
    found = top(reopened, data[0], limit=120)
    assert len(found) == 79 and not set(found) & {*GONE, "e00119"}
    assert kind(reopened) == "ann" and entry(reopened).reason == "missing"  # type: ignore[attr-defined]
    assert entry(reopened).builds == 1  # type: ignore[attr-defined]  # its file went with the deleted vectors
    reopened.close()


def test_another_store_with_the_index_loaded_never_returns_a_deleted_record(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    first = SQLiteStore(path, vector_index=SMALL_ANN)
    data = fill(first, 120)
    first.close()
    reader, deleter = SQLiteStore(path, vector_index=SMALL_ANN), SQLiteStore(path, vector_index=SMALL_ANN)
    assert top(reader, data[0])[0] == "e00000" and kind(reader) == "ann"
    assert deleter.delete(SCOPE, GONE) == 40
    deleter.close()
    found = top(reader, data[0], limit=120)
    assert len(found) == 80 and not set(found) & set(GONE)
    fill(reader, 5, seed=3, start=500)  # new vectors after the delete are found
    assert top(reader, unit_rows(5, 3)[2])[0] == "e00502"
    reader.close()
    again = SQLiteStore(path, vector_index=SMALL_ANN)
    found = top(again, data[0], limit=200)
    assert len(found) == 85 and not set(found) & set(GONE)
    again.close()
