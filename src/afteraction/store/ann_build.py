"""Building a large HNSW graph in a child process, so that the process it serves keeps serving.

usearch's ``Index.add`` holds the GIL for the whole call. Built in a thread of the serving process,
a graph stalled every other thread of it: a search gives the GIL up dozens of times (each sqlite3
call does) and waited about one build chunk to get it back each time, 58 s for one search during a
build at 100k vectors (``benchmarks/bench_build_stall.py``). So a build of ``IndexPolicy.background_from``
vectors or more runs in a child Python (``ann_child.py``, run by path, importing only numpy and
usearch): the keys and vectors go to it through a pipe, it saves the graph into a temporary folder
(beside the database, else the system's), and this process restores it from there.

When no child can do it (no Python executable to run, the child cannot start, fails or writes a
graph that does not match), the graph is built in the calling thread as before, and the reason is
logged. ``stopping`` set kills the child: the build returns None.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from afteraction.store import held_files, vector_index
from afteraction.store.vector_index import AnnIndex, build_threads

if TYPE_CHECKING:
    from afteraction.store.vector_index import Floats, Keys

__all__ = ["CHUNK", "graph"]

log = logging.getLogger("afteraction.store")

#: Vectors added per call, here or in the child. Between calls the thread building here checks
#: ``stopping``, the child that its parent lives.
CHUNK = 8_192
CHILD = Path(__file__).with_name("ann_child.py")
POLL = 0.1  # seconds between checks of ``stopping`` while the child builds


class ChildFailed(Exception):
    """The child could not build the graph; the message says why."""


def graph(
    keys: Keys, vectors: Floats, dimension: int, *, stopping: threading.Event, scratch: Path | None,
    in_child: bool,
) -> AnnIndex | None:  # fmt: skip
    """An HNSW graph of ``vectors`` under ``keys``: in a child process when ``in_child``, else (or
    when the child fails) here, in chunks. None when ``stopping`` was set before it was done."""
    if in_child:
        try:
            return _in_child(keys, vectors, dimension, stopping=stopping, scratch=scratch)
        except ChildFailed as exc:
            if stopping.is_set():
                return None
            log.warning("building the vector index in a child process failed (%s): building it here", exc)
    return _here(keys, vectors, dimension, stopping)


def _here(keys: Keys, vectors: Floats, dimension: int, stopping: threading.Event) -> AnnIndex | None:
    ann = AnnIndex(dimension)
    for start in range(0, len(keys), CHUNK):
        if stopping.is_set():
            return None
        ann.upsert(keys[start : start + CHUNK], vectors[start : start + CHUNK], threads=build_threads(len(keys)))
    return ann


def _in_child(
    keys: Keys, vectors: Floats, dimension: int, *, stopping: threading.Event, scratch: Path | None
) -> AnnIndex | None:
    if not sys.executable:
        raise ChildFailed("no Python executable to run it (sys.executable is empty)")
    if not Path(sys.executable).name.lower().startswith(("python", "pypy")):  # uWSGI, an app bundle: not a Python
        raise ChildFailed(f"sys.executable is not a Python interpreter ({Path(sys.executable).name!r})")
    with _folder(scratch) as folder:
        out, errors = folder / "graph.usearch", folder / "stderr"
        with errors.open("wb") as stderr:
            try:  # from the thread that waits for it: its death signal follows this thread (ann_child.py)
                child = subprocess.Popen(  # our own script, by path, with our interpreter
                    [sys.executable, str(CHILD), str(out), str(os.getpid())],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    env=_environment(),
                    close_fds=True,  # not the build folder's lock: it is this process's, and goes with it
                )
            except OSError as exc:
                raise ChildFailed(f"cannot start {sys.executable}: {exc}") from None
        try:
            _feed(child, keys, vectors, dimension)
            while child.poll() is None:
                if stopping.wait(POLL):
                    return None
        finally:
            if child.poll() is None:
                child.kill()
            child.wait()
        if child.returncode != 0:
            try:
                said = errors.read_bytes()[-400:].decode("utf-8", "replace").strip()
            except OSError:  # the folder went (removed by hand): the exit code says enough
                said = ""
            raise ChildFailed(f"exit code {child.returncode}: {said or 'it said nothing'}")
        return _restore(out, dimension, len(keys))


def _feed(child: subprocess.Popen[bytes], keys: Keys, vectors: Floats, dimension: int) -> None:
    """Write the child's input; ChildFailed when it went away before reading it all."""
    import numpy as np

    spec = {
        "count": len(keys),
        "dimension": dimension,
        "threads": build_threads(len(keys)),
        "chunk": CHUNK,
        "dtype": vector_index.DTYPE,
        "connectivity": vector_index.CONNECTIVITY,
        "expansion_add": vector_index.EXPANSION_ADD,
        "expansion_search": vector_index.EXPANSION_SEARCH,
    }
    assert child.stdin is not None
    try:
        with child.stdin as stream:
            stream.write(json.dumps(spec).encode() + b"\n")
            stream.write(np.ascontiguousarray(keys, dtype="<u8").data.cast("B"))
            stream.write(np.ascontiguousarray(vectors, dtype="<f4").data.cast("B"))
    except OSError as exc:  # BrokenPipeError: it ended early; its exit code and stderr say why
        child.wait()
        raise ChildFailed(f"it stopped reading its input ({exc}); exit code {child.returncode}") from None


def _restore(out: Path, dimension: int, count: int) -> AnnIndex:
    from usearch.index import Index

    try:
        index: Any = Index.restore(str(out), view=False)
    except Exception as exc:  # usearch raises plain RuntimeError/ValueError on bad files
        raise ChildFailed(f"its graph cannot be read ({exc})") from None
    if index is None or index.ndim != dimension or len(index) != count:
        raise ChildFailed("its graph holds other vectors than it was given")
    index.expansion_search = vector_index.EXPANSION_SEARCH
    return AnnIndex(dimension, index)


@contextlib.contextmanager
def _folder(scratch: Path | None) -> Iterator[Path]:
    """A folder for the child's graph: in ``scratch`` (beside the database) if it can be made there,
    else in the system's temporary folder; locked while it is used, then removed with what it holds, by
    this process only (``held_files.BuildFolder``). Those left in ``scratch`` by a process that ended
    (their lock is free) go first."""
    for place in (scratch, None):
        try:
            if place is not None:
                place.mkdir(parents=True, exist_ok=True)
                held_files.sweep_builds(place)
            folder = held_files.BuildFolder(place)
        except OSError as exc:
            if place is None:
                raise ChildFailed(f"no folder to write its graph in ({exc})") from None
            continue
        try:
            yield folder.path
        finally:
            folder.remove()
        return


def _environment() -> dict[str, str]:
    """This process's environment, with its import path: numpy and usearch are found where they were here."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
