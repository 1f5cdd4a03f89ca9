"""The vectors of the texts embedded last: a record whose embedding text did not change needs a
vector at its new revision, not a new embedding."""

from __future__ import annotations

import threading
from collections import OrderedDict

__all__ = ["RecentVectors"]


class RecentVectors:
    """The vectors of the texts embedded last, by model: a record whose embedding text did not
    change (an outcome moved only its confidence) needs a vector at its new revision, not a new
    embedding. Thread-safe; at most ``size`` vectors (~1.5 kB each at 384 dimensions)."""

    def __init__(self, size: int = 2_048) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[str, str], list[float]] = OrderedDict()

    def get(self, model: str, text: str) -> list[float] | None:
        with self._lock:
            found = self._items.get((model, text))
            if found is not None:
                self._items.move_to_end((model, text))
            return found

    def put(self, model: str, text: str, vector: list[float]) -> None:
        with self._lock:
            self._items[(model, text)] = vector
            self._items.move_to_end((model, text))
            while len(self._items) > self.size:
                self._items.popitem(last=False)
