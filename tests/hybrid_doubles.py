"""Real embedders and stores that fail in each way the vector channel must survive."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime

from afteraction.errors import StoreError
from afteraction.model import Candidate, Experience, Scope, Status
from afteraction.store import MemoryStore


class Letters:
    """A deterministic embedder: how often each of a few letters occurs in the text."""

    dimension = 4

    def __init__(self, model_id: str = "letters@1") -> None:
        self.model_id = model_id
        self.threads: list[str] = []
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.threads.append(threading.current_thread().name)
        return [[1.0 + text.count(letter) for letter in "aeio"][: self.dimension] for text in texts]


class Down(Letters):
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise ConnectionError("embedding provider refused the connection")


class NaNs(Letters):
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float("nan")] * 4 for _ in texts]


class Poisoned(Letters):
    """NaN for a text that mentions poison, fine for the others."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        good = super().embed(texts)
        return [[float("nan")] * 4 if "poison" in text else vector for text, vector in zip(texts, good, strict=True)]


class Short(Letters):
    """Says 4 dimensions, returns 3."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [vector[:3] for vector in super().embed(texts)]


class Three(Letters):
    """Honest about its 3 dimensions, but under the same model id as ``Letters``."""

    dimension = 3


class Sleepy(Letters):
    """Takes ``seconds`` per call once ``slow`` is set, until ``release()``."""

    def __init__(self, seconds: float, slow: bool = True) -> None:
        super().__init__()
        self.seconds = seconds
        self.slow = slow
        self._released = threading.Event()

    def release(self) -> None:
        """End every sleep now and from now on: a test's calls that outlived their budget stop
        holding the process's shared query threads, which the next test's searches need."""
        self._released.set()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.slow:
            self._released.wait(self.seconds)
        return super().embed(texts)


class Switching(Letters):
    """A provider that starts serving another model after ``switch()``."""

    def switch(self) -> None:
        self.model_id = "letters@2"


class Gate(Letters):
    """Blocks inside ``embed`` of a text containing ``word`` until released: a real race."""

    def __init__(self, word: str) -> None:
        super().__init__()
        self.word = word
        self.entered = threading.Event()
        self.release = threading.Event()
        self.seen: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen.append(list(texts))
        if any(self.word in text for text in texts) and not self.release.is_set():
            self.entered.set()
            assert self.release.wait(10)
        return super().embed(texts)


class BrokenVectors(MemoryStore):
    """A store whose vector search fails (a corrupt index, a lost connection)."""

    def search_vector(self, *args: object, **kwargs: object) -> list[Candidate]:
        raise StoreError("the vector index is unreadable")


class TextOnly:
    """A Store that keeps no vectors: the Store protocol, by delegation to a MemoryStore."""

    def __init__(self) -> None:
        self._inner = MemoryStore()

    def put(self, experience: Experience) -> bool:
        return self._inner.put(experience)

    def put_many(self, experiences: Sequence[Experience]) -> int:
        return self._inner.put_many(experiences)

    def get(self, scope: Scope, id: str) -> Experience | None:
        return self._inner.get(scope, id)

    def update(self, experience: Experience, *, expected_revision: int) -> Experience:
        return self._inner.update(experience, expected_revision=expected_revision)

    def search_text(
        self, scope: Scope, terms: Sequence[str], *, now: datetime, limit: int = 50, min_confidence: float = 0.5
    ) -> list[Candidate]:
        return self._inner.search_text(scope, terms, now=now, limit=limit, min_confidence=min_confidence)

    def lessons(
        self, scope: Scope, *, limit: int = 50, offset: int = 0, status: Status | None = None
    ) -> list[Experience]:
        return self._inner.lessons(scope, limit=limit, offset=offset, status=status)

    def count(self, scope: Scope) -> int:
        return self._inner.count(scope)

    def delete(self, scope: Scope, ids: Sequence[str]) -> int:
        return self._inner.delete(scope, ids)

    def delete_user(self, tenant: str, user: str) -> list[str]:
        return self._inner.delete_user(tenant, user)

    def iter_all(self, tenant: str | None = None) -> Iterator[Experience]:
        return self._inner.iter_all(tenant)

    def close(self) -> None:
        self._inner.close()


class AsyncConcepts:
    """An async-only embedder (a coroutine ``aembed``, no ``embed``), as a remote service's client
    would be: a deterministic toy of meaning, each dimension a concept that several words name, so
    that "money back request frozen" is near "Refund ticket is stuck in pending" with no word shared.
    ``hang`` makes every call wait for ever (until cancelled); ``output`` replaces the vectors."""

    model_id = "concepts@1"
    dimension = 4
    CONCEPTS = (
        ("refund", "money", "back", "payment", "paid"),
        ("stuck", "pending", "frozen", "hangs", "waiting"),
        ("deploy", "rollout", "release", "pods"),
        ("certificate", "tls", "expired", "x509"),
    )

    def __init__(self) -> None:
        self.calls = 0
        self.cancelled = 0
        self.hang = False
        self.output: list[list[float]] | None = None
        self.loops: set[int] = set()

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.loops.add(id(asyncio.get_running_loop()))
        if self.hang:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        await asyncio.sleep(0)
        if self.output is not None:
            return self.output
        return [self._vector(text) for text in texts]

    def _vector(self, text: str) -> list[float]:
        words = re.findall(r"[a-z0-9]+", text.lower())
        return [0.1 + sum(word in concept for word in words) for concept in self.CONCEPTS]
