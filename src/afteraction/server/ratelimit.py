"""Per-key rate limits: a token bucket per API key, in this process.

Each key with a ``rate`` (requests per second) holds up to ``burst`` tokens; a request takes
one, and the bucket refills at ``rate``. A request finding it empty is refused with the whole
seconds until a token is back (the ``Retry-After`` of a 429).

The buckets live in the process, so with N replicas (or N uvicorn workers) a key may make up
to N times its rate in all. A limit shared across replicas needs a shared counter (PostgreSQL
or Redis); that is left for when a deployment needs it. Buckets idle long enough to be full
again are dropped, so memory follows the keys in use, not the keys ever seen.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

__all__ = ["RateLimiter"]


class RateLimiter:
    """Token buckets keyed by API key id. ``clock`` is monotonic seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, *, sweep_every: int = 10_000) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}  # key id -> (tokens, at)
        self._sweep_every = sweep_every
        self._taken = 0

    def take(self, key: str, rate: float, burst: int) -> int:
        """0 when the request may go ahead (a token was taken), else the whole seconds (at
        least 1) until one is available."""
        now = self._clock()
        with self._lock:
            tokens, at = self._buckets.get(key, (float(burst), now))
            tokens = min(float(burst), tokens + (now - at) * rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                self._taken += 1
                if self._taken % self._sweep_every == 0:
                    self._sweep(now)
                return 0
            self._buckets[key] = (tokens, now)
            return max(1, math.ceil((1.0 - tokens) / rate))

    def _sweep(self, now: float) -> None:
        """Drop buckets unused for an hour: full again by then at any rate of one an hour or more
        (a slower key gets a fresh bucket after an idle hour)."""
        stale = [key for key, (_, at) in self._buckets.items() if now - at > 3600.0]
        for key in stale:
            del self._buckets[key]
