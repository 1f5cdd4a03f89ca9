"""The ANN graph built in a child process (``store/ann_build.py``): the same graph as one built here,
never built in this process when the child can, and built here when it cannot; a closing store kills
the child; an orphaned child stops; what a dead builder left beside the database goes."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("usearch")

from afteraction.store import ann_build, ann_child  # noqa: E402
from afteraction.store.vector_index import AnnIndex  # noqa: E402

DIMENSION = 16


def vectors(n: int, seed: int = 7) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, DIMENSION)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return np.arange(100, 100 + n, dtype=np.int64), rows


def build(
    keys: Any, rows: Any, *, in_child: bool, scratch: Path | None, stopping: threading.Event | None = None
) -> AnnIndex | None:
    event = stopping or threading.Event()
    return ann_build.graph(keys, rows, DIMENSION, stopping=event, scratch=scratch, in_child=in_child)


def refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("a vector was added to a graph in this process")


def fake_child(tmp_path: Path, body: str) -> Path:
    """A script standing in for ``ann_child.py``: it reads its input, then runs ``body``."""
    script = tmp_path / "child.py"
    script.write_text(f"import os, sys\nsys.stdin.buffer.read()\nout = sys.argv[1]\n{body}\n", encoding="utf-8")
    return script


def test_the_child_builds_the_same_graph_and_this_process_adds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys, rows = vectors(2_000)
    here = build(keys, rows, in_child=False, scratch=tmp_path)
    assert here is not None

    monkeypatch.setattr(AnnIndex, "upsert", refuse)
    child = build(keys, rows, in_child=True, scratch=tmp_path / "scratch")
    assert child is not None and len(child) == 2_000
    for query in rows[:50]:
        assert child.nearest(query, 10) == here.nearest(query, 10)
    assert list((tmp_path / "scratch").iterdir()) == []  # its folder went with the graph


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("sys.stderr.write('no usearch here'); sys.exit(1)", "exit code 1: no usearch here"),
        ("open(out, 'wb').write(b'not a graph')", "its graph cannot be read"),
    ],
)
def test_a_failing_child_leaves_the_build_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, body: str, said: str
) -> None:
    monkeypatch.setattr(ann_build, "CHILD", fake_child(tmp_path, body))
    keys, rows = vectors(300)
    with caplog.at_level(logging.WARNING, "afteraction.store"):
        ann = build(keys, rows, in_child=True, scratch=tmp_path / "scratch")
    assert ann is not None and len(ann) == 300
    assert ann.nearest(rows[3], 1) == [103]
    assert said in caplog.text and "building it here" in caplog.text


@pytest.mark.parametrize(
    ("executable", "said"),
    [("", "sys.executable is empty"), ("/usr/bin/uwsgi", "sys.executable is not a Python interpreter ('uwsgi')")],
)
def test_no_python_to_run_means_building_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, executable: str, said: str
) -> None:
    """An embedded interpreter's sys.executable may be empty, or the host program (uWSGI): never run that."""
    started: list[object] = []
    monkeypatch.setattr(subprocess, "Popen", lambda *args, **kwargs: started.append(args))
    monkeypatch.setattr(sys, "executable", executable)
    keys, rows = vectors(100)
    with caplog.at_level(logging.WARNING, "afteraction.store"):
        ann = build(keys, rows, in_child=True, scratch=None)
    assert ann is not None and len(ann) == 100 and started == []
    assert said in caplog.text


def test_stopping_kills_the_child_and_removes_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pid_file = tmp_path / "pid"
    monkeypatch.setattr(
        ann_build,
        "CHILD",
        fake_child(tmp_path, f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\nimport time; time.sleep(60)"),
    )
    stopping = threading.Event()
    keys, rows = vectors(100)
    threading.Timer(0.5, stopping.set).start()
    assert build(keys, rows, in_child=True, scratch=tmp_path / "scratch", stopping=stopping) is None
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running for its minute
        os.kill(pid, 0)
    assert list((tmp_path / "scratch").iterdir()) == []


def test_an_orphaned_child_stops_without_writing(tmp_path: Path) -> None:
    keys, rows = vectors(50)
    spec = {"count": 50, "dimension": DIMENSION, "threads": 1, "chunk": 10, "dtype": "f16", "connectivity": 16,
            "expansion_add": 64, "expansion_search": 64}  # fmt: skip
    out = tmp_path / "graph.usearch"
    not_its_parent = str(os.getpid() + 1_000_000)
    data = json.dumps(spec).encode() + b"\n" + keys.astype("<u8").tobytes() + rows.astype("<f4").tobytes()
    done = subprocess.run([sys.executable, ann_child.__file__, str(out), not_its_parent], input=data, check=False)
    assert done.returncode == ann_child.ORPHANED
    assert not out.exists()


def test_a_dead_builders_folder_goes_a_live_ones_stays(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = scratch / f".afteraction-build-{dead.pid}-abc"
    live = scratch / f".afteraction-build-{os.getpid()}-def"
    for folder in (left, live):
        folder.mkdir(parents=True)
        (folder / "graph.usearch").write_bytes(b"x" * 10)
    keys, rows = vectors(100)
    assert build(keys, rows, in_child=True, scratch=scratch) is not None
    assert not left.exists() and live.exists()


def test_a_store_builds_its_large_graph_in_a_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the store: the background build of a (tenant, model) goes to a child (never added to
    in this process), and the searches after it come from the graph it built, exactly ranked."""
    from afteraction.store import SQLiteStore
    from afteraction.store.vector_index import IndexPolicy
    from tests.store.test_sqlite_vectors import exact_top, fill, kind, top

    started: list[list[str]] = []
    real = subprocess.Popen

    def spy(args: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        started.append(args)
        return real(args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", spy)
    store = SQLiteStore(tmp_path / "m.db", vector_index=IndexPolicy(ann_from=50, background_from=0))
    try:
        rows = fill(store, 200)
        monkeypatch.setattr(AnnIndex, "upsert", refuse)
        top(store, rows[1])  # starts the build
        store.vectors.wait(timeout=60)
        assert kind(store) == "ann"
        assert top(store, rows[2]) == exact_top(rows, rows[2])
    finally:
        store.close()
    assert [args[1] for args in started] == [ann_child.__file__]


def test_an_orphan_waiting_for_input_stops_too(tmp_path: Path) -> None:
    """A forked copy of the parent may keep the child's input open after the parent died: the child, blocked
    reading it, still notices it is an orphan (it waited for ever)."""
    child = subprocess.Popen(
        [sys.executable, ann_child.__file__, str(tmp_path / "graph.usearch"), str(os.getpid() + 1_000_000)],
        stdin=subprocess.PIPE,
    )
    try:
        assert child.wait(timeout=20) == ann_child.ORPHANED
    finally:
        child.kill()
        assert child.stdin is not None
        child.stdin.close()


FORKED = """
import json, os, sys, threading, time
import numpy as np
from pathlib import Path
from afteraction.store import ann_build
from afteraction.store.vector_index import AnnIndex

ann_build.CHILD = Path(sys.argv[1])
scratch = Path(sys.argv[2])
rows = np.random.default_rng(7).standard_normal((300, 16)).astype(np.float32)
rows /= np.linalg.norm(rows, axis=1, keepdims=True)
keys = np.arange(100, 400, dtype=np.int64)
built = []
stop = threading.Event()
worker = threading.Thread(
    target=lambda: built.append(ann_build.graph(keys, rows, 16, stopping=stop, scratch=scratch, in_child=True))
)
worker.start()
while not (scratch.exists() and any(scratch.iterdir())):
    time.sleep(0.05)
(folder,) = scratch.iterdir()
pid = os.fork()
if pid == 0:
    sys.exit(0)  # a pre-fork server's worker ending: the interpreter's exit handlers run
os.waitpid(pid, 0)
there = folder.exists()
worker.join(60)
size = built[0] is not None and len(built[0])
print(json.dumps({"kept": there, "built": size, "left": len(list(scratch.iterdir()))}))
"""


def test_a_forked_copy_that_exits_leaves_the_parents_build_alone(tmp_path: Path) -> None:
    """A pre-fork server's worker, forked while a build runs, runs the interpreter's exit handlers when it exits:
    the build's folder went with them (``TemporaryDirectory``), and the build failed. In a process of its own."""
    slow = tmp_path / "slow_child.py"
    slow.write_text(
        f"import runpy, time\ntime.sleep(1.5)\nrunpy.run_path({str(ann_child.__file__)!r}, run_name='__main__')\n",
        encoding="utf-8",
    )
    script = tmp_path / "forked.py"
    script.write_text(FORKED, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(slow), str(tmp_path / "scratch")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"kept": True, "built": 300, "left": 0}, done.stderr
