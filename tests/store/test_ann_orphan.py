"""An ANN child whose parent was killed stops at once on Linux, also in the middle of a chunk: usearch's ``add``
holds the GIL for the whole chunk (seconds), so the child's own watch thread cannot run then; the kernel kills it
(``PR_SET_PDEATHSIG``). Elsewhere it stops within one chunk."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

pytest.importorskip("numpy")
pytest.importorskip("usearch")

from afteraction.store import ann_child  # noqa: E402

#: One chunk of 30,000 vectors, one thread, a wide search while adding: 9 s on the machine this was written on
#: (the between-chunk check comes only after it).
PARENT = """
import json, os, subprocess, sys, time
import numpy as np
count, dimension = 30_000, 64
spec = {"count": count, "dimension": dimension, "threads": 1, "chunk": count, "dtype": "f16", "connectivity": 16,
        "expansion_add": 256, "expansion_search": 64}
rows = np.random.default_rng(1).standard_normal((count, dimension)).astype("<f4")
child = subprocess.Popen([sys.executable, sys.argv[1], sys.argv[2], str(os.getpid())], stdin=subprocess.PIPE)
child.stdin.write(json.dumps(spec).encode() + b"\\n")
child.stdin.write(np.arange(count, dtype="<u8").tobytes())
child.stdin.write(rows.tobytes())
child.stdin.close()  # it has read all but a pipe's worth: it builds
print(child.pid, flush=True)
time.sleep(600)
"""


def gone(pid: int) -> bool:
    """No such process, or a zombie left for its new parent to reap."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def test_an_orphan_stops_in_the_middle_of_a_chunk(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(PARENT, encoding="utf-8")
    out = tmp_path / "graph.usearch"
    parent = subprocess.Popen(
        [sys.executable, str(script), ann_child.__file__, str(out)], stdout=subprocess.PIPE, text=True
    )
    child = 0
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        time.sleep(1.0)  # in add(), with the GIL
        assert not gone(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        killed = time.monotonic()
        while not gone(child) and time.monotonic() - killed < 5:
            time.sleep(0.02)
        lived = time.monotonic() - killed
        assert lived < 1.0, f"the orphan lived {lived:.1f} s"
        assert not out.exists()
    finally:
        parent.kill()
        parent.communicate()
        if child and not gone(child):
            os.kill(child, signal.SIGKILL)


def test_a_child_whose_parent_died_before_it_asked_to_die_with_it_stops(tmp_path: Path) -> None:
    """The parent gone before the child asked the kernel (its parent is no longer the one it was given): it stops at
    once, before reading its input."""
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, ann_child.__file__, str(tmp_path / "graph.usearch"), str(os.getpid() + 1_000_000)],
        stdin=subprocess.PIPE,  # kept open: it would wait for its input
    )
    try:
        assert child.wait(timeout=30) == ann_child.ORPHANED
        assert time.monotonic() - started < 1.0  # not after the watch's first second
    finally:
        child.kill()
        assert child.stdin is not None
        child.stdin.close()
        child.wait()
