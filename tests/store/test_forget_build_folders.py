"""A forget or a drop of vectors in the SQLite store also removes the build folders beside the database that a dead
host left (its child's graph holds every vector, the forgotten one's included), and leaves a live build's folder: that
build's graph is never saved as the index (it was built from a snapshot below the delete's ``seq``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("usearch")

from afteraction.store import SQLiteStore, ann_build, ann_child
from afteraction.store.vector_index import IndexFiles, IndexPolicy
from tests.conformance.builders import SCOPE
from tests.store.test_sqlite_forget_index import folder
from tests.store.test_sqlite_vectors import MODEL, entry, exact_top, fill, top, unit_rows

IN_CHILD = IndexPolicy(ann_from=50, background_from=0)  # every build in the background, in a child


def slow_child(tmp_path: Path, seconds: float) -> Path:
    """``ann_child.py``, started ``seconds`` late: a build that is still running when the test acts."""
    script = tmp_path / "slow_child.py"
    script.write_text(
        f"import runpy, time\ntime.sleep({seconds})\nrunpy.run_path({ann_child.__file__!r}, run_name='__main__')\n",
        encoding="utf-8",
    )
    return script


def lingering_child(tmp_path: Path) -> Path:
    """``ann_child.py``, which stays (until its parent dies) once it saved its graph, and says so in ``saved``."""
    script = tmp_path / "lingering_child.py"
    script.write_text(
        "import runpy, sys, time\nfrom pathlib import Path\ntry:\n"
        f"    runpy.run_path({ann_child.__file__!r}, run_name='__main__')\n"
        "finally:\n    Path(sys.argv[1]).with_name('saved').touch()\n    time.sleep(600)\n",
        encoding="utf-8",
    )
    return script


def builds(path: Path) -> list[Path]:
    return sorted(folder(path).glob(".afteraction-build-*")) if folder(path).exists() else []


def leaked(path: Path, rows: np.ndarray, indices: list[int]) -> list[str]:
    """The vectors of ``indices`` (as the ANN graph keeps them, float16) that a file beside the database holds,
    in the build folders too."""
    files = sorted(p for p in folder(path).rglob("*") if p.is_file()) if folder(path).exists() else []
    return [f"{file.name}: e{i:05d}" for file in files for i in indices if rows[i].astype(np.float16).tobytes() in
            file.read_bytes()]  # fmt: skip


def wait_for(found: object, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not found():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


HOST = """
import sys, time
from pathlib import Path
from afteraction.store import SQLiteStore, ann_build
from afteraction.store.vector_index import IndexPolicy
from tests.store.test_sqlite_vectors import fill, top
ann_build.CHILD = Path(sys.argv[2])
store = SQLiteStore(Path(sys.argv[1]), vector_index=IndexPolicy(ann_from=50, background_from=0))
rows = fill(store, 200)
top(store, rows[0])  # starts the build in a child
time.sleep(600)
"""


@pytest.mark.parametrize("how", ["forget", "drop"])
def test_a_dead_hosts_build_folder_goes_with_a_forget(tmp_path: Path, how: str) -> None:
    """A host killed -9 while its child built (the child's graph saved, its folder left): the forget or drop
    removes the folder, so the forgotten lesson's embedding is in no file beside the database."""
    path = tmp_path / "memory.db"
    script = tmp_path / "host.py"
    script.write_text(HOST, encoding="utf-8")
    host = subprocess.Popen(
        [sys.executable, str(script), str(path), str(lingering_child(tmp_path))],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )
    try:
        wait_for(lambda: any((build / "saved").exists() for build in builds(path)))
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait()
    (left,) = builds(path)
    rows = unit_rows(200)  # fill's
    assert leaked(path, rows, [0]) != []  # the check sees the graph in the folder
    store = SQLiteStore(path, vector_index=IN_CHILD)
    try:
        if how == "forget":
            assert store.delete(SCOPE, ["e00000"]) == 1
        else:
            assert store.drop_vectors(MODEL, tenant=SCOPE.tenant) == 200
    finally:
        store.close()
    assert not left.exists()
    assert leaked(path, rows, [0]) == []


def test_a_live_build_stays_and_its_graph_is_never_saved_after_a_forget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another store (another process) forgets a lesson while this one builds: the live build's folder stays (its
    lock is held). The graph it gives back holds the forgotten vector, and is never saved: it was built from the
    rows up to the snapshot's watermark, the delete took a ``seq`` above it, and a save first asks whether a delete
    came after the watermark (``VectorSearch._clean``). The index stays in memory (a search joins every key with the
    rows, so the lesson is not found) and is built again from the table by the next process."""
    monkeypatch.setattr(ann_build, "CHILD", slow_child(tmp_path, 1.5))
    path = tmp_path / "memory.db"
    store = SQLiteStore(path, vector_index=IN_CHILD)
    try:
        rows = fill(store, 200)
        top(store, rows[3])  # starts the build
        wait_for(lambda: builds(path) != [])
        (live,) = builds(path)
        other = SQLiteStore(path, vector_index=IN_CHILD)
        try:
            assert other.delete(SCOPE, ["e00003"]) == 1
        finally:
            other.close()
        assert live.exists()  # a live build's folder: left to its maker
        store.vectors.wait(timeout=60)
        built = entry(store)
        assert built.index.kind == "ann" and built.tainted  # type: ignore[attr-defined]
        assert IndexFiles(path, SCOPE.tenant, MODEL).manifest() == "missing"
        assert builds(path) == [] and leaked(path, rows, [3]) == []
        assert top(store, rows[3]) == [i for i in exact_top(rows, rows[3], 11) if i != "e00003"][:10]
    finally:
        store.close()
    assert IndexFiles(path, SCOPE.tenant, MODEL).manifest() == "missing"  # not at close either
    assert leaked(path, rows, [3]) == []
