"""Per-key rate limits: token buckets by name (a key's requests, a key's events), in this process.

A bucket with a ``rate`` (tokens per second) holds up to ``burst`` tokens; a take of ``cost``
tokens (one request, or the N events of a batch) finds them there or takes nothing, and the
bucket refills at ``rate``. A take finding too few is refused with the whole seconds until
``cost`` tokens are back (the ``Retry-After`` of a 429). A cost above the burst could never be
met: the caller refuses it first (``KeyAuth.charge``: 413 naming ``event_burst``).

The buckets live in the process, so with N replicas (or N uvicorn workers) a key may make up
to N times its rate in all. A limit shared across replicas needs a shared counter (PostgreSQL
or Redis); that is left for when a deployment needs it. A bucket full again is dropped (every
``sweep_every`` takes), so memory follows the keys in use, not the keys ever seen; a dropped
bucket comes back full, exactly as it would have been, so dropping never gives a key more.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

__all__ = ["RateLimiter"]


class RateLimiter:
    """Token buckets keyed by name (an API key id, or its id + ``/events``). ``clock`` is monotonic seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, *, sweep_every: int = 10_000) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float, float]] = {}  # name -> (tokens, at, full again at)
        self._sweep_every = sweep_every
        self._taken = 0

    def take(self, key: str, rate: float, burst: int, cost: int = 1) -> int:
        """0 when the ``cost`` tokens were taken, else the whole seconds (at least 1) until that
        many are back (nothing is taken then). ``cost`` is from 1 to ``burst``."""
        if not 1 <= cost <= burst:
            raise ValueError(f"a cost of {cost} tokens cannot be taken from a bucket of {burst}")
        now = self._clock()
        with self._lock:
            tokens, at, _ = self._buckets.get(key, (float(burst), now, now))
            tokens = min(float(burst), tokens + (now - at) * rate)
            if tokens >= cost:
                tokens -= cost
                self._buckets[key] = (tokens, now, now + (burst - tokens) / rate)
                self._taken += 1
                if self._taken % self._sweep_every == 0:
                    self._sweep(now)
                return 0
            self._buckets[key] = (tokens, now, now + (burst - tokens) / rate)
            return max(1, math.ceil((cost - tokens) / rate))

    def _sweep(self, now: float) -> None:
        """Drop the buckets full again by now: one made afresh is the same."""
        full = [key for key, (_, _, full_at) in self._buckets.items() if full_at <= now]
        for key in full:
            del self._buckets[key]
