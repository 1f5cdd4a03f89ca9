"""Dropping a model's vectors in the SQLite store, beyond the shared contract: the ANN index
files of the dropped (tenant, model) leave ``<db>-vectors/`` and do not come back, whether the
store is reopened, was searching the model, or another store on the same file had it loaded."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from afteraction.store import SQLiteStore
from afteraction.store.base import StoredVector
from afteraction.store.vector_index import IndexFiles
from tests.conformance.builders import NOW, SCOPE, scoped
from tests.store.test_sqlite_vectors import MODEL, SMALL_ANN, exact_top, fill, kind, top

GLOBEX = scoped(SCOPE, tenant="globex")
OTHER = "other-model@1"


def files(path: Path, tenant: str, model: str = MODEL) -> IndexFiles:
    return IndexFiles(path, tenant, model)


def saved(path: Path) -> set[str]:
    folder = path.with_name(path.name + "-vectors")
    return {p.name for p in folder.iterdir()} if folder.exists() else set()


def both_tenants(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """120 vectors in acme and 60 in globex, each tenant's ANN index built and saved."""
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    acme, globex = fill(store, 120), fill(store, 60, seed=1, start=500, scope=GLOBEX)
    assert top(store, acme[0])[0] == "e00000" and top(store, globex[0], scope=GLOBEX)[0] == "e00500"
    assert kind(store) == kind(store, "globex") == "ann"
    store.close()
    assert files(path, "acme").index_path.exists() and files(path, "globex").index_path.exists()
    return acme, globex


def test_a_dropped_models_index_files_are_removed_and_reopening_does_not_recreate_them(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    both_tenants(path)
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    store.put_vectors([StoredVector("acme", "e00001", 1, OTHER, [1.0, 0.0])])
    assert store.drop_vectors(MODEL) == 180
    assert saved(path) == set()
    assert store.search_vector(SCOPE, MODEL, [1.0] * 16, now=NOW) == []
    store.close()
    reopened = SQLiteStore(path, vector_index=SMALL_ANN)
    assert [m.model for m in reopened.vector_models()] == [OTHER]
    reopened.close()
    assert saved(path) == set()


def test_dropping_one_tenants_vectors_removes_only_its_files(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    acme, _ = both_tenants(path)
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    assert top(store, acme[7]) == exact_top(acme, acme[7])  # acme's saved index loaded and in use
    assert store.drop_vectors(MODEL, tenant="globex") == 60
    assert not files(path, "globex").index_path.exists() and not files(path, "globex").manifest_path.exists()
    assert files(path, "acme").index_path.exists()
    assert top(store, acme[7]) == exact_top(acme, acme[7])
    store.close()
    assert not files(path, "globex").index_path.exists()
    assert saved(path) == {files(path, "acme").index_path.name, files(path, "acme").manifest_path.name}


def test_a_store_that_had_the_index_loaded_does_not_save_it_back_after_another_dropped_it(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    acme, _ = both_tenants(path)
    reader = SQLiteStore(path, vector_index=SMALL_ANN)
    fill(reader, 5, seed=2, start=900)  # caught up past what is saved: it would save at close
    assert top(reader, acme[2])[0] == "e00002"
    dropper = SQLiteStore(path, vector_index=SMALL_ANN)
    assert dropper.drop_vectors(MODEL) == 185
    dropper.close()
    reader.close()
    assert saved(path) == set()


def test_a_model_stored_again_after_a_drop_gets_a_fresh_index(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    acme, _ = both_tenants(path)
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    assert top(store, acme[1])[0] == "e00001"
    store.drop_vectors(MODEL)
    rows = np.random.default_rng(5).standard_normal((80, 8)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    store.put_vectors([StoredVector("acme", f"e{i:05d}", 1, MODEL, rows[i].tolist()) for i in range(80)])
    assert top(store, rows[4]) == exact_top(rows, rows[4])
    assert kind(store) == "ann"
    store.close()
    assert files(path, "acme").index_path.exists() and not files(path, "globex").index_path.exists()
