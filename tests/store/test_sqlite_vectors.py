"""The SQLite store's vectors beyond the shared contract: the table, keeping in step with other
connections, and the ANN index beside the file (built, reused, and rebuilt when it cannot be
trusted). Small sizes: ``IndexPolicy(ann_from=...)`` moves to the ANN index early."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from afteraction.errors import ValidationError
from afteraction.model import Scope, Status
from afteraction.store import SQLiteStore
from afteraction.store.base import StoredVector
from afteraction.store.sqlite_vectors import IndexPolicy
from afteraction.store.vector_index import IndexFiles
from tests.conformance.builders import NOW, SCOPE, experience, scoped

MODEL = "test-model@1"
DIM = 16
SMALL_ANN = IndexPolicy(ann_from=50, background_from=100_000)  # ANN from 50 vectors, built inline


def unit_rows(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def fill(store: SQLiteStore, n: int, *, seed: int = 0, start: int = 0, scope: Scope = SCOPE) -> np.ndarray:
    rows = unit_rows(n, seed)
    store.put_many([experience(f"e{start + i:05d}", scope=scope) for i in range(n)])
    stored = store.put_vectors(
        [StoredVector(scope.tenant, f"e{start + i:05d}", 1, MODEL, rows[i].tolist()) for i in range(n)]
    )
    assert stored == n
    return rows


def top(store: SQLiteStore, query: Sequence[float], *, scope: Scope = SCOPE, limit: int = 10) -> list[str]:
    return [c.experience.id for c in store.search_vector(scope, MODEL, list(query), now=NOW, limit=limit)]


def exact_top(rows: np.ndarray, query: np.ndarray, limit: int = 10, start: int = 0) -> list[str]:
    order = np.argsort(-(rows @ query), kind="stable")[:limit]
    return [f"e{start + i:05d}" for i in order]


def entry(store: SQLiteStore, tenant: str = "acme") -> object:
    return store.vectors.entries[(tenant, MODEL)]


def kind(store: SQLiteStore, tenant: str = "acme") -> str:
    return str(store.vectors.entries[(tenant, MODEL)].index.kind)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def built(path: Path) -> Iterator[tuple[Path, np.ndarray]]:
    """A file with 120 vectors whose ANN index has been built and saved."""
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    rows = fill(store, 120)
    assert top(store, rows[3]) == exact_top(rows, rows[3])
    assert kind(store) == "ann"
    store.close()
    yield path, rows


def files(path: Path, tenant: str = "acme") -> IndexFiles:
    return IndexFiles(path, tenant, MODEL)


# the table


def test_vectors_are_float32_blobs_with_their_revision_and_dimension(path: Path) -> None:
    store = SQLiteStore(path)
    store.put(experience("a"))
    assert store.put_vectors([StoredVector("acme", "a", 1, MODEL, [0.6, 0.8])]) == 1
    store.close()
    with closing(sqlite3.connect(path)) as db:
        tenant, id, model, revision, dimension, blob, seq = db.execute(
            "SELECT tenant, id, model, revision, dimension, vector, seq FROM vectors"
        ).fetchone()
    assert (tenant, id, model, revision, dimension, seq) == ("acme", "a", MODEL, 1, 2, 1)
    assert np.frombuffer(blob, dtype="<f4").tolist() == pytest.approx([0.6, 0.8])


def test_a_vector_of_another_length_for_the_same_model_is_refused_and_nothing_is_written(path: Path) -> None:
    store = SQLiteStore(path)
    store.put_many([experience("a"), experience("b")])
    store.put_vectors([StoredVector("acme", "a", 1, MODEL, [1.0, 0.0])])
    with pytest.raises(ValidationError) as caught:
        store.put_vectors([StoredVector("acme", "b", 1, "other", [1.0]), StoredVector("acme", "b", 1, MODEL, [1.0])])
    assert caught.value.field == "vectors[1].vector"
    assert [e.id for e in store.missing_vectors("other")] == ["a", "b"]  # the first item was rolled back too
    store.close()


@pytest.mark.parametrize("bad", [[], [float("nan"), 1.0], [float("inf")], ["x"]])
def test_a_vector_that_is_not_finite_numbers_is_refused(path: Path, bad: list[object]) -> None:
    store = SQLiteStore(path)
    store.put(experience("a"))
    with pytest.raises(ValidationError, match=r"vectors\[0\]\.vector"):
        store.put_vectors([StoredVector("acme", "a", 1, MODEL, bad)])  # type: ignore[arg-type]
    store.close()


def test_another_tenants_record_of_the_same_id_gets_no_vector(path: Path) -> None:
    store = SQLiteStore(path)
    store.put(experience("a"))
    assert store.put_vectors([StoredVector("globex", "a", 1, MODEL, [1.0, 0.0])]) == 0
    assert store.search_vector(Scope("globex", "support", "refunds"), MODEL, [1.0, 0.0], now=NOW) == []
    store.close()


def test_missing_vectors_skip_a_tenant_filter_and_page_across_many(path: Path) -> None:
    store = SQLiteStore(path)
    fill(store, 30)
    store.put_many([experience(f"m{i}") for i in range(7)])
    pages, after = [], None
    while page := store.missing_vectors(MODEL, limit=3, tenant="acme", after=after):
        pages.append([e.id for e in page])
        after = (page[-1].scope.tenant, page[-1].id)
    assert pages == [["m0", "m1", "m2"], ["m3", "m4", "m5"], ["m6"]]
    assert store.missing_vectors(MODEL, limit=0) == []
    store.close()


def test_once_a_pass_found_nothing_missing_only_later_writes_are_read(path: Path) -> None:
    store = SQLiteStore(path)
    fill(store, 20)
    assert store.missing_vectors(MODEL) == []  # a full pass: the mark moves to the last write
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT written FROM vector_marks WHERE model = ?", (MODEL,)).fetchone() == (20,)
        plan = " ".join(row[3] for row in db.execute("EXPLAIN QUERY PLAN SELECT * FROM experiences WHERE written > 3"))
    assert "experiences_written" in plan  # the records after the mark are found by index, not by a scan
    store.put_many([experience("new")])
    store.update(replace(experience("e00003"), lesson="Changed."), expected_revision=1)
    assert [e.id for e in store.missing_vectors(MODEL)] == ["e00003", "new"]
    assert store.count_missing_vectors(MODEL) == 2
    assert store.missing_vectors("another-model") != []  # each model has its own mark
    store.close()


def test_a_record_still_without_a_vector_holds_the_mark_back(path: Path) -> None:
    store = SQLiteStore(path)
    store.put_many([experience("stuck")])  # never embedded (say, the embedder failed on it)
    fill(store, 5)
    store.put_many([experience("later")])
    assert [e.id for e in store.missing_vectors(MODEL)] == ["later", "stuck"]
    store.put_vectors([StoredVector("acme", "later", 1, MODEL, unit_rows(1)[0].tolist())])
    for _ in range(2):  # the mark stops below "stuck", so it is found on every pass
        assert [e.id for e in store.missing_vectors(MODEL)] == ["stuck"]
    other = SQLiteStore(path)  # and by another process's pass
    assert [e.id for e in other.missing_vectors(MODEL, tenant="acme")] == ["stuck"]
    other.close()
    store.close()


# keeping in step


def test_writes_by_another_connection_are_seen_by_the_next_search(path: Path) -> None:
    reader, writer = SQLiteStore(path), SQLiteStore(path)
    rows = fill(writer, 20)
    assert top(reader, rows[0], limit=1) == ["e00000"]  # loads the matrix
    writer.put_many([experience("late")])
    writer.put_vectors([StoredVector("acme", "late", 1, MODEL, rows[0].tolist())])
    writer.put_vectors([StoredVector("acme", "e00001", 1, MODEL, (-rows[0]).tolist())])  # replaced
    found = reader.search_vector(SCOPE, MODEL, rows[0].tolist(), now=NOW, limit=30)
    assert {c.experience.id for c in found[:2]} == {"e00000", "late"}
    assert found[-1].experience.id == "e00001"
    assert found[-1].vector_score == pytest.approx(-1.0, abs=1e-5)
    writer.update(replace(experience("late"), lesson="Changed."), expected_revision=1)
    assert "late" not in top(reader, rows[0], limit=30)  # its vector is no longer current
    reader.close()
    writer.close()


def test_writes_by_another_process_are_seen(path: Path) -> None:
    store = SQLiteStore(path)
    rows = fill(store, 10)
    assert top(store, rows[0], limit=1) == ["e00000"]
    script = f"""
from afteraction.store import SQLiteStore
from afteraction.store.base import StoredVector
from tests.conformance.builders import experience
s = SQLiteStore({str(path)!r})
s.put(experience("elsewhere"))
assert s.put_vectors([StoredVector("acme", "elsewhere", 1, {MODEL!r}, {rows[0].tolist()!r})]) == 1
s.close()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert set(top(store, rows[0], limit=2)) == {"e00000", "elsewhere"}
    store.close()


# the ANN index


def test_past_the_threshold_an_ann_index_is_built_and_saved_beside_the_file(built: tuple[Path, np.ndarray]) -> None:
    path, rows = built
    manifest = json.loads(files(path).manifest_path.read_text())
    assert files(path).index_path.parent == path.with_name("memory.db-vectors")
    assert (manifest["tenant"], manifest["model"], manifest["dimension"], manifest["count"]) == (
        "acme",
        MODEL,
        DIM,
        120,
    )
    assert manifest["watermark"] == 1
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    for i in (0, 7, 42):
        assert top(store, rows[i]) == exact_top(rows, rows[i])
    assert kind(store) == "ann"
    assert entry(store).builds == 0  # type: ignore[attr-defined]  # loaded, not rebuilt
    assert entry(store).reason == ""  # type: ignore[attr-defined]
    store.close()


def test_below_the_threshold_the_search_stays_exact_and_writes_no_file(path: Path) -> None:
    store = SQLiteStore(path, vector_index=IndexPolicy(ann_from=1_000))
    rows = fill(store, 120)
    assert top(store, rows[5]) == exact_top(rows, rows[5])
    assert kind(store) == "exact"
    store.close()
    assert not path.with_name("memory.db-vectors").exists()


def _reopen(path: Path, rows: np.ndarray) -> SQLiteStore:
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    assert top(store, rows[9]) == exact_top(rows, rows[9])
    assert kind(store) == "ann"
    return store


def test_a_deleted_index_is_rebuilt(built: tuple[Path, np.ndarray]) -> None:
    path, rows = built
    files(path).index_path.unlink()
    store = _reopen(path, rows)
    assert entry(store).reason == "missing"  # type: ignore[attr-defined]
    assert entry(store).builds == 1  # type: ignore[attr-defined]
    assert files(path).index_path.exists()
    store.close()


@pytest.mark.parametrize("damage", ["truncate", "garble", "empty"])
def test_a_truncated_or_garbled_index_is_rebuilt_never_trusted(built: tuple[Path, np.ndarray], damage: str) -> None:
    path, rows = built
    target = files(path).index_path
    data = bytearray(target.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "garble":
        middle = len(data) // 2
        data[middle : middle + 64] = bytes(b ^ 0xFF for b in data[middle : middle + 64])
    else:
        data = bytearray()
    target.write_bytes(bytes(data))
    store = _reopen(path, rows)
    assert "differs from its manifest" in entry(store).reason  # type: ignore[attr-defined]
    store.close()
    assert json.loads(files(path).manifest_path.read_text())["bytes"] == files(path).index_path.stat().st_size


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"model": "another-model"}, "another tenant or model"),
        ({"tenant": "globex"}, "another tenant or model"),
        ({"dimension": 8}, "dimension 8"),
        ({"format": 99}, "format 99"),
        ({"watermark": 50}, "past the database's"),
        (None, "unreadable manifest"),
        ({"watermark": "1"}, "unreadable manifest"),  # a field of another type: not trusted, not a crash
        ({"count": None}, "unreadable manifest"),
    ],
)
def test_a_manifest_that_does_not_match_gets_the_index_rebuilt(
    built: tuple[Path, np.ndarray], change: dict[str, object] | None, reason: str
) -> None:
    path, rows = built
    manifest_path = files(path).manifest_path
    manifest = json.loads(manifest_path.read_text())
    manifest_path.write_text("{not json" if change is None else json.dumps({**manifest, **change}))
    store = _reopen(path, rows)
    assert reason in entry(store).reason  # type: ignore[attr-defined]
    assert entry(store).builds == 1  # type: ignore[attr-defined]
    store.close()


def test_vectors_written_behind_its_back_are_caught_up(built: tuple[Path, np.ndarray]) -> None:
    path, rows = built
    other = SQLiteStore(path, vector_index=IndexPolicy(ann_from=10**9))  # never touches the index files
    more = fill(other, 30, seed=1, start=120)
    other.put_vectors([StoredVector("acme", "e00003", 1, MODEL, (-rows[3]).tolist())])  # one replaced
    other.close()
    everything = np.vstack([rows, more])
    everything[3] = -rows[3]
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    for i in (0, 125, 149):
        assert top(store, everything[i]) == exact_top(everything, everything[i])
    assert entry(store).builds == 0  # type: ignore[attr-defined]  # caught up from its watermark
    assert len(entry(store).index) == 150  # type: ignore[attr-defined]
    store.close()
    assert json.loads(files(path).manifest_path.read_text())["count"] == 150  # saved on close


def test_an_index_of_other_vectors_under_the_right_names_is_rebuilt(
    built: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path, _ = built
    other_path = tmp_path / "other" / "memory.db"
    other = SQLiteStore(other_path, vector_index=SMALL_ANN)
    rows = fill(other, 120, seed=7)  # same tenant, model, ids and count: different vectors
    other.close()
    shutil.rmtree(other_path.with_name("memory.db-vectors"), ignore_errors=True)
    shutil.copytree(path.with_name("memory.db-vectors"), other_path.with_name("memory.db-vectors"))
    store = _reopen(other_path, rows)
    assert "differs from the database's" in entry(store).reason  # type: ignore[attr-defined]
    store.close()


def test_an_index_with_fewer_vectors_than_the_table_is_rebuilt(built: tuple[Path, np.ndarray]) -> None:
    path, rows = built
    with closing(sqlite3.connect(path)) as db, db:
        pk = db.execute("SELECT max(pk) FROM experiences").fetchone()[0]
        blob = np.asarray(rows[0], dtype="<f4").tobytes()
        db.execute(
            "INSERT INTO vectors VALUES ('acme', 'e00000x', ?, ?, 1, ?, ?, 0)", (MODEL, pk + 1, DIM, blob)
        )  # a row below the watermark that the index never saw
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    top(store, rows[0])
    assert "where the database has 121" in entry(store).reason  # type: ignore[attr-defined]
    store.close()


def test_scope_and_eligibility_apply_to_ann_candidates_with_a_fallback_when_few_survive(path: Path) -> None:
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    rows = fill(store, 300)
    small = scoped(SCOPE, project="billing")
    store.put_many(
        [experience("b-ok", scope=small), experience("b-quarantined", scope=small, status=Status.QUARANTINED)]
    )
    store.put_vectors(
        [
            StoredVector("acme", "b-ok", 1, MODEL, (-rows[0]).tolist()),  # far from the query
            StoredVector("acme", "b-quarantined", 1, MODEL, rows[0].tolist()),
        ]
    )
    assert top(store, rows[0], scope=small) == ["b-ok"]  # 300 better candidates of another project
    assert kind(store) == "ann"
    found = top(store, rows[0])
    assert found == exact_top(rows, rows[0])
    assert store.search_vector(Scope("globex", "support", "refunds"), MODEL, rows[0].tolist(), now=NOW) == []
    store.close()


def test_a_large_collection_is_indexed_in_the_background_while_search_stays_exact(path: Path) -> None:
    store = SQLiteStore(path, vector_index=IndexPolicy(ann_from=50, background_from=0))
    rows = fill(store, 200)
    assert top(store, rows[1]) == exact_top(rows, rows[1])  # exact now, or ANN if the build was quick
    store.vectors.wait(timeout=30)
    assert kind(store) == "ann"
    assert top(store, rows[2]) == exact_top(rows, rows[2])
    assert files(path).index_path.exists()
    store.close()


def test_build_vector_index_rebuilds_on_request_and_replaces_the_files(built: tuple[Path, np.ndarray]) -> None:
    path, rows = built
    files(path).manifest_path.write_text("{}")
    store = SQLiteStore(path, vector_index=IndexPolicy(ann_from=10**9))  # a rebuild ignores the threshold
    (state,) = store.build_vector_index(MODEL, rebuild=True)
    assert (state.tenant, state.kind, state.vectors, state.built) == ("acme", "ann", 120, True)
    assert store.build_vector_index("never-stored") == []
    assert top(store, rows[4]) == exact_top(rows, rows[4])
    assert json.loads(files(path).manifest_path.read_text())["count"] == 120
    (again,) = store.build_vector_index(MODEL)  # up to date: nothing to build
    assert (again.kind, again.built) == ("ann", False)
    store.close()


def test_an_index_saved_before_a_restore_of_the_database_is_rebuilt(built: tuple[Path, np.ndarray]) -> None:
    """A database restored from a backup, then written to, reuses the seqs and pks of the rows it lost: the
    saved index's count and watermark can match again; the newest rows it claims to hold show it is another's."""
    path, rows = built
    backup = path.with_name("backup.db")
    shutil.copy(path, backup)
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    fill(store, 40, seed=1, start=500)  # then saved with them
    assert top(store, rows[0])[0] == "e00000"
    store.build_vector_index(MODEL)
    store.close()
    shutil.copy(backup, path)  # the backup back, the index files beside it kept
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    other = fill(store, 40, seed=2, start=900)  # other records take the same seqs and pks
    found = top(store, other[5], limit=1)
    assert found == ["e00905"]
    assert "differs from the database's" in entry(store).reason  # type: ignore[attr-defined]
    store.close()


def test_an_index_folder_that_cannot_be_written_is_logged_not_raised(path: Path) -> None:
    path.with_name("memory.db-vectors").write_text("a file where the folder would be")
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    rows = fill(store, 120)
    (state,) = store.build_vector_index(MODEL, rebuild=True)
    assert state.kind == "ann" and "could not be written" in state.reason
    assert top(store, rows[7]) == exact_top(rows, rows[7])
    store.close()


def test_build_vector_index_builds_when_due_and_stays_exact_below(path: Path) -> None:
    store = SQLiteStore(path, vector_index=IndexPolicy(ann_from=100, background_from=0))
    fill(store, 60)
    fill(store, 120, scope=Scope("globex", "support", "refunds"))
    states = store.build_vector_index(MODEL)
    assert [(s.tenant, s.kind, s.vectors, s.built) for s in states] == [
        ("acme", "exact", 60, False),
        ("globex", "ann", 120, True),
    ]
    assert states[1].reason == "missing"
    store.close()


def test_another_tenant_has_its_own_index_file(path: Path) -> None:
    store = SQLiteStore(path, vector_index=SMALL_ANN)
    rows = fill(store, 60)
    theirs = Scope("globex", "support", "refunds")
    other = fill(store, 60, seed=3, scope=theirs)
    assert top(store, other[0], scope=theirs)[0] == "e00000"
    assert top(store, rows[0])[0] == "e00000"
    assert kind(store, "globex") == kind(store) == "ann"
    assert files(path).index_path != files(path, "globex").index_path
    store.close()


def test_usearch_and_onnxruntime_load_in_either_order() -> None:
    """usearch 2.26 (numkong) crashed the process when onnxruntime was imported after it: the
    embed extra pins a usearch that does not."""
    for first, second in (("usearch.index", "onnxruntime"), ("onnxruntime", "usearch.index")):
        done = subprocess.run(
            [sys.executable, "-c", f"import {first}; import {second}; print('ok')"], capture_output=True, check=False
        )
        assert done.returncode == 0, (first, second, done.stderr[-500:])
