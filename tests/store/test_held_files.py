"""What a process writes beside the database for a while (``store/held_files.py``): a build folder or a temporary
index file is removed by a sweep when, and only when, no live process holds its lock, whatever its pid says (a host
in another PID namespace: its pid is dead here, or is 1, alive here); a save that fails removes its temporary file;
a save removes those left by saves that were killed."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="locks by flock: Linux and macOS")

np = pytest.importorskip("numpy")
pytest.importorskip("usearch")

import fcntl  # noqa: E402

from afteraction.store import ann_build  # noqa: E402
from afteraction.store.vector_index import AnnIndex, IndexFiles  # noqa: E402

DIMENSION = 16
BUILD, LOCK = ".afteraction-build-", "lock"  # as held_files names them (spelled out: the old code has no held_files)


def temporary(name: str, tag: str) -> str:
    return f".{name}.{tag}.tmp"


def rows(n: int) -> tuple[object, object]:
    values = np.random.default_rng(3).standard_normal((n, DIMENSION)).astype(np.float32)
    values /= np.linalg.norm(values, axis=1, keepdims=True)
    return np.arange(1, n + 1, dtype=np.int64), values


def dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


@pytest.fixture
def hold() -> Iterator[object]:
    """``hold(path)`` takes the lock of ``path`` as a live process would (a lock belongs to an open file, so one
    taken here conflicts with the sweep's own, as another process's does), until the test ends."""
    opened: list[int] = []

    def take(path: Path) -> None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        opened.append(fd)

    yield take
    for fd in opened:
        os.close(fd)


def build_folder(place: Path, pid: int | str, *, locked_by: object = None) -> Path:
    """A build folder named after ``pid`` holding a graph and a lock file (held when ``locked_by`` is ``hold``)."""
    folder = place / f"{BUILD}{pid}-{os.urandom(4).hex()}"
    folder.mkdir(parents=True)
    (folder / "graph.usearch").write_bytes(b"g" * 100)
    (folder / LOCK).touch()
    if locked_by is not None:
        locked_by(folder / LOCK)  # type: ignore[operator]
    return folder


def build_beside(scratch: Path) -> None:
    """A child build with ``scratch`` as its place: it sweeps there first."""
    keys, values = rows(100)
    built = ann_build.graph(keys, values, DIMENSION, stopping=threading.Event(), scratch=scratch, in_child=True)
    assert built is not None and len(built) == 100


def test_a_live_build_whose_pid_is_dead_here_stays(tmp_path: Path, hold: object) -> None:
    """Host A in another PID namespace builds: its pid names no process here. It holds its lock: it stays."""
    live = build_folder(tmp_path / "scratch", dead_pid(), locked_by=hold)
    build_beside(tmp_path / "scratch")
    assert (live / "graph.usearch").exists()


def test_a_dead_build_whose_pid_is_alive_here_goes(tmp_path: Path) -> None:
    """Host A was pid 1 in its namespace and died: pid 1 always runs here, but its lock is free. It goes."""
    left = build_folder(tmp_path / "scratch", 1)
    build_beside(tmp_path / "scratch")
    assert not left.exists()
    assert list((tmp_path / "scratch").iterdir()) == []


def test_a_killed_makers_folder_goes_and_an_old_versions_by_its_pid(tmp_path: Path) -> None:
    """A maker killed -9 holding its folder: the kernel freed the lock. A folder with no lock file (made by a
    version before locks) goes by its pid, as it did; an empty one (its maker died before locking it) goes too."""
    from afteraction.store import held_files

    place = tmp_path / "scratch"
    place.mkdir()
    made = subprocess.run(
        [sys.executable, "-c", "import sys, os; from pathlib import Path; from afteraction.store import held_files\n"
         f"f = held_files.BuildFolder(Path({str(place)!r})); (f.path / 'graph.usearch').write_bytes(b'g')\n"
         "print(f.path, flush=True); os._exit(9)"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    killed = Path(made.stdout.strip())
    assert made.returncode == 9 and (killed / LOCK).exists(), made.stderr
    old = place / f"{BUILD}{dead_pid()}-old"
    old.mkdir()
    (old / "graph.usearch").write_bytes(b"g")
    mine_old = place / f"{BUILD}{os.getpid()}-old"  # a live pid of this namespace and no lock: kept
    mine_old.mkdir()
    (mine_old / "graph.usearch").write_bytes(b"g")
    empty = place / f"{BUILD}{os.getpid()}-empty"
    empty.mkdir()
    assert sorted(held_files.sweep_builds(place)) == sorted([killed, old, empty])
    assert [p.name for p in place.iterdir()] == [mine_old.name]


def test_a_maker_whose_empty_folder_a_sweep_took_makes_another(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep between the maker's mkdtemp and its lock removes the empty folder; the maker notices and makes
    another, which, locked, no sweep removes."""
    from afteraction.store import held_files

    real = tempfile.mkdtemp
    calls: list[str] = []

    def swept(prefix: str, dir: Path) -> str:
        made = real(prefix=prefix, dir=dir)
        calls.append(made)
        if len(calls) == 1:
            assert held_files.sweep_builds(dir) == [Path(made)]
        return made

    monkeypatch.setattr(tempfile, "mkdtemp", swept)
    folder = held_files.BuildFolder(tmp_path)
    try:
        assert len(calls) == 2 and folder.path == Path(calls[1])
        assert held_files.sweep_builds(tmp_path) == [] and folder.path.exists()
    finally:
        folder.remove()
    assert list(tmp_path.iterdir()) == []


def test_a_process_it_starts_does_not_hold_the_folders_lock(tmp_path: Path) -> None:
    """The lock is the maker's: a process it starts (even one keeping every inheritable descriptor) does not hold
    it, so the folder goes once the maker has, while that process runs on."""
    from afteraction.store import held_files

    folder = held_files.BuildFolder(tmp_path)
    other = subprocess.Popen(
        [sys.executable, "-c", "import time; print('started', flush=True); time.sleep(30)"],
        close_fds=False,
        stdout=subprocess.PIPE,
    )
    try:
        assert other.stdout is not None and other.stdout.readline() == b"started\n"
        os.close(folder._fd)  # the maker ends without removing it
        assert held_files.sweep_builds(tmp_path) == [folder.path]
    finally:
        other.kill()
        other.communicate()


# temporary index files


def saved_files(tmp_path: Path) -> tuple[IndexFiles, AnnIndex]:
    files = IndexFiles(tmp_path / "m.db", "acme", "model")
    keys, values = rows(2_000)
    ann = AnnIndex(DIMENSION)
    ann.upsert(keys, values)
    return files, ann


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


FULL = """
import resource, sys
from pathlib import Path
import numpy as np
from afteraction.store.vector_index import AnnIndex, IndexFiles
values = np.random.default_rng(3).standard_normal((2000, 16)).astype(np.float32)
values /= np.linalg.norm(values, axis=1, keepdims=True)
ann = AnnIndex(16)
ann.upsert(np.arange(1, 2001, dtype=np.int64), values)
files = IndexFiles(Path(sys.argv[1]), "acme", "model")
files.folder.mkdir()
resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
try:
    files.save(ann, 7)
except OSError as exc:
    print("failed:", exc)
"""


def test_a_write_that_fails_leaves_no_temporary_file(tmp_path: Path) -> None:
    """A write cut short (here by a file size limit, EFBIG, after 20 KB; a full disk does it with ENOSPC): the save
    fails as before, and the part it wrote goes (it held the space the store needed next)."""
    script = tmp_path / "full.py"
    script.write_text(FULL, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "m.db")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stdout.startswith("failed:"), done.stdout + done.stderr
    assert list((tmp_path / "m.db-vectors").iterdir()) == []


def test_a_rename_that_fails_leaves_no_temporary_file_and_the_saved_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files, ann = saved_files(tmp_path)
    files.save(ann, 7)
    before = files.index_path.read_bytes()
    ann.remove([1, 2, 3])

    def refuse(*args: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="Input/output"):
        files.save(ann, 8)
    monkeypatch.undo()
    assert temporaries(files.folder) == []
    assert files.index_path.read_bytes() == before
    loaded = files.load(DIMENSION)
    assert not isinstance(loaded, str) and loaded[1].watermark == 7


def test_a_save_sweeps_the_temporary_files_no_live_process_writes(tmp_path: Path, hold: object) -> None:
    """Left by saves killed: of a pid dead here (named as before, with no random part), and of pid 1 (a host in
    another namespace): they go. One whose writer holds its lock, whatever its pid, stays."""
    files, ann = saved_files(tmp_path)
    files.folder.mkdir()
    index, manifest = files.index_path.name, files.manifest_path.name
    dead = [temporary(index, str(dead_pid())), temporary(manifest, "1-0badcafe")]
    live = temporary(f"other{index[index.index('.') :]}", f"{dead_pid()}-5eed5eed")
    for name in [*dead, live]:
        (files.folder / name).write_bytes(b"x" * 1_000)
    hold(files.folder / live)  # type: ignore[operator]
    files.save(ann, 7)
    assert temporaries(files.folder) == [live]
    assert not isinstance(files.load(DIMENSION), str)
