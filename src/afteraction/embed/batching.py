"""How a batch of tokenized texts becomes model calls, and how those calls share the cores.

- ``plan``: texts sorted by length, cut into calls of at most ``batch_size`` texts and
  ``batch_tokens`` padded tokens (each call padded only to its own longest text), and into at
  least ``parallel`` calls when there are that many texts, so every thread gets work.
- ``run``: the calls on ``parallel`` threads, the caller's included, longest first, each thread
  taking the next call when done (onnxruntime releases the GIL while it computes). The helper
  threads run at a lower priority (``HELPER_NICE``, Linux): a query that arrives while a batch
  fills every core is not starved by it; the caller's thread keeps its own priority, so a batch
  never runs slower than on one thread. A helper that has not started when the caller has taken
  the last call is cancelled, not waited for: a batch never waits on helper threads that are not
  there (in the child of ``os.fork()``, a pool's threads were the parent's), it runs on the
  caller's thread alone then.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

__all__ = ["HELPER_NICE", "MAX_PARALLEL", "plan", "pool", "run", "usable_cores"]

#: At most this many threads for one batch by default.
MAX_PARALLEL = 4
#: How much lower a batch's helper threads run (added to their nice value).
HELPER_NICE = 10


def usable_cores() -> int:
    """The cores this process may run on, at most ``MAX_PARALLEL``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_PARALLEL))


def plan(lengths: Sequence[int], *, batch_size: int, batch_tokens: int, parallel: int) -> list[list[int]]:
    """Model calls, as lists of indexes into ``lengths`` (tokens per text)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    most = min(batch_size, -(-len(order) // parallel))
    calls = []
    start = 0
    while start < len(order):
        # Longest last: a call's width is its last text's length, and it takes as many texts as
        # fit the token budget at that width.
        end = min(len(order), start + most)
        while end - start > 1 and (end - start) * lengths[order[end - 1]] > batch_tokens:
            end -= 1
        calls.append(order[start:end])
        start = end
    return calls


def _lower_priority() -> None:
    try:
        thread = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + HELPER_NICE))
    except (AttributeError, OSError):  # not Linux, or not allowed: the same priority then
        pass


def pool(parallel: int) -> ThreadPoolExecutor:
    """The helper threads for batches of ``parallel`` threads (the caller is the last one)."""
    return ThreadPoolExecutor(parallel - 1, thread_name_prefix="afteraction-embed-batch", initializer=_lower_priority)


def run(helpers: ThreadPoolExecutor, parallel: int, calls: list[list[int]], call: Callable[[list[int]], None]) -> None:
    """``call(indexes)`` for each of ``calls`` on ``parallel`` threads; the first error raises."""
    pending = list(reversed(calls))
    take = threading.Lock()

    def work() -> None:
        while True:
            with take:
                if not pending:
                    return
                indexes = pending.pop(0)
            call(indexes)

    started = [helpers.submit(work) for _ in range(min(parallel, len(calls)) - 1)]
    try:
        work()
    finally:
        for helper in started:
            if not helper.cancel():  # it started: it finishes the call it took
                helper.result()
