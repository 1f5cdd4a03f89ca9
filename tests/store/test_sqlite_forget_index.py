"""Forgetting lessons in the SQLite store leaves no index file beside the database holding their
vectors: not the file saved before (whether or not the deleting store had it loaded), not one saved
afterwards by a store that had the index loaded (of this process or another), not one a crash or a
save racing the delete left behind (it is never loaded, and goes). usearch keeps a removed key's
values in the file it saves, so the files are searched for the deleted vectors' bytes, not only
their keys. Small sizes: ``IndexPolicy(ann_from=...)`` moves to the ANN index early."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from afteraction.errors import StoreError
from afteraction.store import SQLiteStore
from afteraction.store.vector_index import IndexFiles
from tests.conformance.builders import SCOPE, scoped
from tests.store.test_sqlite_vectors import MODEL, SMALL_ANN, entry, fill, kind, top

ALICE = scoped(SCOPE, user="alice")
ALICES = [f"e{i:05d}" for i in range(200, 240)]


def folder(path: Path) -> Path:
    return path.with_name(path.name + "-vectors")


def leaked(path: Path, rows: np.ndarray, indices: Iterable[int], start: int = 0) -> list[str]:
    """The deleted vectors (row ``i`` of ``rows`` is record ``e{start + i}``) that a file beside the
    database still holds: their keys, or their values as the ANN index keeps them (float16)."""
    found = []
    for file in sorted(folder(path).iterdir()) if folder(path).exists() else []:
        data = file.read_bytes()
        for i in indices:
            if rows[i].astype(np.float16).tobytes() in data:
                found.append(f"{file.name}: e{start + i:05d}")
    return found


def pks(path: Path, ids: Iterable[str]) -> list[int]:
    with closing(sqlite3.connect(path)) as db:
        return [db.execute("SELECT pk FROM experiences WHERE id = ?", (id,)).fetchone()[0] for id in ids]


def count(path: Path, table: str) -> int:
    with closing(sqlite3.connect(path)) as db:
        return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def shared_and_alices(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """80 lessons shared in acme and 40 of user alice, their ANN index built and saved."""
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    shared, alices = fill(store, 80), fill(store, 40, seed=1, start=200, scope=ALICE)
    assert top(store, shared[0])[0] == "e00000" and kind(store) == "ann"
    store.close()
    assert len(leaked(path, alices, range(40), 200)) == 40  # the check sees what a file holds
    return shared, alices


def forget_alice(store: SQLiteStore, how: str) -> None:
    if how == "delete":
        assert store.delete(ALICE, ALICES) == 40
    else:
        assert store.delete_user("acme", "alice") == ALICES


@pytest.mark.parametrize("how", ["delete", "delete_user"])
def test_forgetting_in_a_store_that_never_loaded_the_index_removes_its_file(tmp_path: Path, how: str) -> None:
    path = tmp_path / "memory.db"
    _, alices = shared_and_alices(path)
    store = SQLiteStore(path, vector_index=SMALL_ANN)  # as the CLI's forget and forget-user open it
    forget_alice(store, how)
    assert leaked(path, alices, range(40), 200) == []
    store.close()
    assert leaked(path, alices, range(40), 200) == []

    again = SQLiteStore(path, vector_index=SMALL_ANN)
    found = top(again, alices[0], scope=ALICE, limit=200)
    assert sorted(found) == [f"e{i:05d}" for i in range(80)]
    assert kind(again) == "ann" and entry(again).reason == "missing"  # type: ignore[attr-defined]
    again.close()
    assert IndexFiles(path, "acme", MODEL).index_path.exists()  # built again, from the table
    assert leaked(path, alices, range(40), 200) == []


def test_the_deleting_store_with_the_index_loaded_never_saves_it_again(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    _, alices = shared_and_alices(path)
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    assert top(store, alices[0], scope=ALICE)[0] == "e00200" and kind(store) == "ann"
    forget_alice(store, "delete_user")
    assert not set(top(store, alices[0], scope=ALICE, limit=120)) & set(ALICES)
    assert len(entry(store).index) == 80  # type: ignore[attr-defined]
    store.close()
    assert leaked(path, alices, range(40), 200) == []


def test_rebuilding_the_index_after_a_delete_saves_one_without_the_deleted_vectors(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    _, alices = shared_and_alices(path)
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    assert top(store, alices[0], scope=ALICE)[0] == "e00200"
    forget_alice(store, "delete")
    [state] = store.build_vector_index(MODEL)
    assert (state.kind, state.vectors, state.built) == ("ann", 80, True)
    assert "deleted" in state.reason
    assert IndexFiles(path, "acme", MODEL).index_path.exists()
    assert leaked(path, alices, range(40), 200) == []
    store.close()
    assert leaked(path, alices, range(40), 200) == []


@pytest.mark.parametrize("searches_after", [False, True], ids=["closes", "searches-then-closes"])
def test_another_store_with_the_index_loaded_never_saves_it_over_the_removed_file(
    tmp_path: Path, searches_after: bool
) -> None:
    path = tmp_path / "memory.db"
    _, alices = shared_and_alices(path)
    reader = SQLiteStore(path, vector_index=SMALL_ANN)
    assert top(reader, alices[0], scope=ALICE)[0] == "e00200" and kind(reader) == "ann"
    more = fill(reader, 5, seed=2, start=500)
    assert top(reader, more[1])[0] == "e00501"  # it caught up since it loaded the file: it would save at close

    deleter = SQLiteStore(path, vector_index=SMALL_ANN)
    forget_alice(deleter, "delete_user")
    deleter.close()
    assert leaked(path, alices, range(40), 200) == []
    if searches_after:
        assert not set(top(reader, alices[0], scope=ALICE, limit=200)) & set(ALICES)
        newer = fill(reader, 5, seed=3, start=600)
        assert top(reader, newer[2])[0] == "e00602"
    reader.close()
    assert leaked(path, alices, range(40), 200) == []


def test_a_file_saved_before_a_delete_is_not_loaded_when_its_count_still_agrees(tmp_path: Path) -> None:
    """A crash after the commit, before the files went (or a save that raced the delete): the newest
    records' pks are taken again by new ones, so the count and the sampled rows agree."""
    path = tmp_path / "memory.db"
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    rows = fill(store, 120)
    assert top(store, rows[0])[0] == "e00000" and kind(store) == "ann"
    store.close()
    kept = tmp_path / "kept"
    shutil.copytree(folder(path), kept)
    gone = [f"e{i:05d}" for i in range(80, 120)]
    before = pks(path, gone)

    store = SQLiteStore(path, vector_index=SMALL_ANN)
    assert store.delete(SCOPE, gone) == 40
    fill(store, 40, seed=4, start=300)
    store.close()
    assert pks(path, [f"e{i:05d}" for i in range(300, 340)]) == before  # the same keys, other records
    shutil.rmtree(folder(path))
    shutil.copytree(kept, folder(path))  # the file the delete should have removed

    reopened = SQLiteStore(path, vector_index=SMALL_ANN)
    assert not set(top(reopened, rows[100], limit=200)) & set(gone)
    assert "deleted" in entry(reopened).reason  # type: ignore[attr-defined]
    reopened.close()
    assert leaked(path, rows, range(80, 120)) == []


def test_a_file_saved_before_a_delete_goes_at_the_next_open_below_the_ann_size(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    rows = fill(store, 60)
    assert top(store, rows[0])[0] == "e00000" and kind(store) == "ann"
    store.close()
    kept = tmp_path / "kept"
    shutil.copytree(folder(path), kept)
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    assert store.delete(SCOPE, [f"e{i:05d}" for i in range(20)]) == 20
    store.close()
    shutil.rmtree(folder(path), ignore_errors=True)
    shutil.copytree(kept, folder(path))

    reopened = SQLiteStore(path, vector_index=SMALL_ANN)  # 40 vectors: searched exactly, the file never read
    assert top(reopened, rows[30])[0] == "e00030" and kind(reopened) == "exact"
    reopened.close()
    assert leaked(path, rows, range(20)) == []


def test_a_file_of_an_earlier_version_is_not_loaded_once_a_vector_was_deleted(tmp_path: Path) -> None:
    """Earlier versions saved an index after a delete took keys out of it (usearch keeps their values):
    such a file agrees with the table in every other way."""
    path = tmp_path / "memory.db"
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    rows = fill(store, 120)
    assert top(store, rows[0])[0] == "e00000"
    ann = entry(store).index  # type: ignore[attr-defined]
    gone = [f"e{i:05d}" for i in range(0, 120, 3)]
    keys = pks(path, gone)
    assert store.delete(SCOPE, gone) == 40
    store.close()
    ann.remove(keys)
    with closing(sqlite3.connect(path)) as db:
        watermark = db.execute("SELECT max(seq) FROM vectors").fetchone()[0]
    files = IndexFiles(path, "acme", MODEL)
    files.save(ann, watermark)
    manifest = json.loads(files.manifest_path.read_text())
    files.manifest_path.write_text(json.dumps({**manifest, "format": 1}))
    assert leaked(path, rows, range(0, 120, 3))  # removed keys, their values still in the file

    reopened = SQLiteStore(path, vector_index=SMALL_ANN)
    assert not set(top(reopened, rows[0], limit=200)) & set(gone)
    assert "earlier version" in entry(reopened).reason  # type: ignore[attr-defined]
    reopened.close()
    assert leaked(path, rows, range(0, 120, 3)) == []


def test_a_model_dropped_then_stored_again_is_not_saved_by_a_store_that_had_it_loaded(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    shared, alices = shared_and_alices(path)
    reader = SQLiteStore(path, vector_index=SMALL_ANN)
    assert top(reader, alices[0], scope=ALICE)[0] == "e00200"
    fill(reader, 5, seed=2, start=500)
    assert top(reader, alices[0], scope=ALICE)[0] == "e00200"  # caught up: it would save at close

    dropper = SQLiteStore(path, vector_index=SMALL_ANN)
    assert dropper.drop_vectors(MODEL) == 125
    fill(dropper, 60, seed=5, start=700)  # the model again, at the same dimension
    dropper.close()
    reader.close()
    assert leaked(path, alices, range(40), 200) == []
    assert leaked(path, shared, range(80)) == []


def test_a_delete_whose_index_file_cannot_be_removed_deletes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.db"
    shared_and_alices(path)

    def refuse(database: Path, model: str, tenant: str | None = None) -> list[Path]:
        raise PermissionError(13, "Permission denied", str(folder(database)))

    store = SQLiteStore(path, vector_index=SMALL_ANN)
    monkeypatch.setattr(IndexFiles, "remove_model", staticmethod(refuse))
    with pytest.raises(StoreError, match="vector index files"):
        store.delete_user("acme", "alice")
    assert count(path, "experiences") == count(path, "vectors") == 120
    monkeypatch.undo()
    assert store.delete_user("acme", "alice") == ALICES
    store.close()


def test_a_delete_that_commits_while_another_store_saves_the_index_removes_what_it_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The delete commits between the saver's last look and its write, and the deleter's removal after
    the commit is lost (a crash): the saver looks again once it has written, and removes the file."""
    path = tmp_path / "memory.db"
    _, alices = shared_and_alices(path)
    reader = SQLiteStore(path, vector_index=SMALL_ANN)
    assert top(reader, alices[0], scope=ALICE)[0] == "e00200"
    fill(reader, 5, seed=2, start=500)
    assert top(reader, alices[0], scope=ALICE)[0] == "e00200"  # caught up: it saves at close
    deleter = SQLiteStore(path, vector_index=SMALL_ANN)
    save, remove_model = IndexFiles.save, IndexFiles.remove_model

    def delete_then_save(files: IndexFiles, ann: object, watermark: int) -> object:
        monkeypatch.setattr(IndexFiles, "remove_model", staticmethod(lambda *args, **kwargs: []))
        forget_alice(deleter, "delete_user")
        monkeypatch.setattr(IndexFiles, "remove_model", staticmethod(remove_model))
        return save(files, ann, watermark)  # type: ignore[arg-type]

    monkeypatch.setattr(IndexFiles, "save", delete_then_save)
    reader.close()
    deleter.close()
    assert leaked(path, alices, range(40), 200) == []
