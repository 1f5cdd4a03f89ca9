"""The exit gate for native embedding work.

A Python process that exits while another thread is inside onnxruntime (loading a model, or
running one) is aborted by the C++ runtime ("terminate called without an active exception",
exit status 134): daemon threads keep running native code while the interpreter tears down.
Background indexing and the lazy model load run in daemon threads, so every native call goes
through ``GATE.call()``; at exit ``GATE.close`` refuses new calls and waits (bounded) for the
ones in flight, so the process ends cleanly.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from afteraction.embed.forking import at_fork
from afteraction.errors import EmbedderError

__all__ = ["GATE", "ExitGate"]

#: How long exit waits for native calls in flight (a model load or one batch takes seconds).
EXIT_WAIT = 30.0


class ExitGate:
    def __init__(self) -> None:
        self._state = threading.Condition()
        self._active = 0
        self._closing = False

    @contextmanager
    def call(self) -> Iterator[None]:
        """Hold the gate open for one native call; EmbedderError once the process is exiting."""
        with self._state:
            if self._closing:
                raise EmbedderError("the process is exiting: no new embedding starts")
            self._active += 1
        try:
            yield
        finally:
            with self._state:
                self._active -= 1
                self._state.notify_all()

    @property
    def closing(self) -> bool:
        """Whether the process is exiting (no new native call starts)."""
        return self._closing

    def close(self, timeout: float = EXIT_WAIT) -> bool:
        """Refuse new calls and wait for those in flight; True when none is left."""
        with self._state:
            self._closing = True
            return self._state.wait_for(lambda: self._active == 0, timeout)

    def after_fork(self) -> None:
        """In a forked child: the parent's calls in flight are not running here (their threads are gone), so
        none is waited for at the child's exit (it waited 30 s), and the lock is new."""
        self._state = threading.Condition()
        self._active = 0


GATE = ExitGate()
atexit.register(GATE.close)
at_fork(GATE.after_fork)
