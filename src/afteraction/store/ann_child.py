"""The child process that builds an HNSW graph for ``ann_build``: run as a script, never imported.

``python ann_child.py OUT PARENT_PID`` reads from stdin one JSON line (``count``, ``dimension``,
``threads``, ``chunk`` and the graph's parameters), then ``count`` keys (uint64, little-endian) and
``count × dimension`` values (float32, little-endian); it builds the graph in chunks and saves it to
``OUT``. It imports nothing of afteraction, only numpy and usearch.

An orphan stops (code 3) before writing anything. On Linux the kernel kills it (``PR_SET_PDEATHSIG``,
asked for first thing; then it checks that its parent did not die before that), also in the middle of a
chunk, which holds the GIL for seconds. Elsewhere, and as well, it checks that its parent still lives
between chunks, and each second in a thread of its own (a forked copy of the parent may keep its input
open after the parent died); that thread does not run while a chunk is added, so there an orphan stops
within one chunk.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

ORPHANED = 3
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _read_into(stream: Any, buffer: memoryview) -> None:
    """Fill ``buffer`` from ``stream``; EOFError when the stream ends first (the parent went away)."""
    done = 0
    while done < len(buffer):
        got = stream.readinto(buffer[done:])
        if not got:
            raise EOFError(f"input ended after {done} of {len(buffer)} bytes")
        done += got


def _watch(parent: int) -> None:
    """Exit once the parent is gone, whatever this process is doing (reading input that a forked copy of
    the parent keeps open, or building): checked each second in a thread of its own."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(ORPHANED)


def _die_with_parent() -> None:
    """On Linux, be killed (SIGKILL) when the parent dies. PR_SET_PDEATHSIG follows the *thread* that started
    this process, not the whole parent: ``ann_build`` starts it from the thread that then waits for it (and kills
    it when stopped), which ends only after this process has, or with its whole process. Safe here."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl to call: the checks between chunks and the watch remain
        pass


def main(argv: list[str]) -> int:
    out, parent = Path(argv[1]), int(argv[2])
    _die_with_parent()
    if os.getppid() != parent:  # it died before the line above: no signal will come
        return ORPHANED
    threading.Thread(target=_watch, args=(parent,), daemon=True).start()
    import numpy as np
    from usearch.index import Index

    stream = sys.stdin.buffer
    spec = json.loads(stream.readline())
    count, dimension, chunk = int(spec["count"]), int(spec["dimension"]), int(spec["chunk"])
    keys = np.empty(count, dtype="<u8")
    vectors = np.empty((count, dimension), dtype="<f4")
    _read_into(stream, keys.data.cast("B"))
    _read_into(stream, vectors.data.cast("B"))
    index = Index(
        ndim=dimension,
        metric="ip",
        dtype=spec["dtype"],
        connectivity=spec["connectivity"],
        expansion_add=spec["expansion_add"],
        expansion_search=spec["expansion_search"],
    )
    for start in range(0, count, chunk):
        if os.getppid() != parent:
            return ORPHANED
        index.add(keys[start : start + chunk], vectors[start : start + chunk], threads=spec["threads"])
    if os.getppid() != parent:
        return ORPHANED
    index.save(str(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
