"""The ``Embedder`` protocol, and the checks every embedder's output goes through.

An embedder turns a batch of texts into one vector each. Its output is not trusted: ``Checked``
wraps any embedder so that what reaches the index is always a list of ``expected`` vectors of
``dimension`` finite floats, scaled to unit length (so a dot product is the cosine), and so that
whatever goes wrong inside it surfaces as one ``EmbedderError`` naming the model and the fault.

Vectors are plain ``list[list[float]]``: the layers above (and the pure core) need no numpy. An
embedder may return a numpy array or any nested sequence of numbers at run time; ``check_vectors``
accepts those and converts them.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Protocol, cast, runtime_checkable

from afteraction.embed.loop import LoopThread
from afteraction.errors import ConfigError, EmbedderError, ValidationError

__all__ = [
    "ASYNC_TIMEOUT",
    "AsyncEmbedder",
    "Checked",
    "Embedder",
    "aembed",
    "check_texts",
    "check_vectors",
    "count_setting",
]

#: Seconds ``Checked.embed`` waits for an async-only embedder's coroutine when no timeout is given.
ASYNC_TIMEOUT = 60.0


@runtime_checkable
class Embedder(Protocol):
    """Anything that embeds a batch of texts: a model id, a dimension and ``embed``.

    ``model_id`` names the model and everything that changes its vectors (vectors of different
    model ids are never compared); ``dimension`` is the length of every vector. ``embed`` returns
    one vector per text, in order. It may block; callers run it off the event loop.

    ``embed`` must be thread-safe: memory calls it from several threads at once (the vector
    channel's query threads, one per concurrent search, and the background indexer). The bundled
    embedders are.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@runtime_checkable
class AsyncEmbedder(Protocol):
    """An embedder with a native coroutine (a remote endpoint, say). ``aembed`` prefers it."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]: ...


def count_setting(owner: str, name: str, value: object, *, zero: bool = False) -> int:
    """An embedder's count setting (threads, a batch or cache size): ``value`` when it is an int of
    at least 1 (of at least 0 with ``zero``), else ConfigError naming ``owner`` and ``name``."""
    if not isinstance(value, int) or isinstance(value, bool) or value < (0 if zero else 1):
        rule = "a non-negative int" if zero else "a positive int"
        raise ConfigError(f"{owner} {name} must be {rule}, got {value!r}")
    return value


def check_texts(texts: Sequence[str]) -> list[str]:
    """The batch as a list of strings; ``ValidationError`` for a bare string or a non-string item."""
    if isinstance(texts, (str, bytes)):
        raise ValidationError("texts", "must be a sequence of strings, not a single string")
    batch = list(texts)
    for index, text in enumerate(batch):
        if not isinstance(text, str):
            raise ValidationError(f"texts[{index}]", f"must be a str, not {type(text).__name__}")
    return batch


def _as_list(value: object, who: str, what: str) -> list[object]:
    tolist = getattr(value, "tolist", None)  # numpy arrays (and their rows) convert at C speed
    if callable(tolist) and not isinstance(value, (str, bytes)):
        value = tolist()
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes, bytearray, dict)):
        return list(value)
    raise EmbedderError(f"{who}: {what} is not a sequence of numbers but {type(value).__name__}")


def _number(value: object, who: str, where: str) -> float:
    if type(value) is float:
        number = value
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)
    else:
        raise EmbedderError(f"{who}: {where} is not a number but {type(value).__name__} ({value!r:.40})")
    if math.isnan(number):
        raise EmbedderError(f"{who}: {where} is NaN")
    if math.isinf(number):
        raise EmbedderError(f"{who}: {where} is infinite ({number})")
    return number


def _plain_finite(values: list[object]) -> bool:
    """Whether every value is a Python float and all are finite: checked at C speed, ~15 µs for 384
    values where the value-by-value check takes ~250 µs of the query's time (and holds the GIL the
    text search waits on). A sum of finite floats is finite unless it overflows, and any NaN or
    infinity makes it NaN or infinite; either way the value-by-value check then names the fault."""
    return set(map(type, values)) == {float} and math.isfinite(sum(cast("list[float]", values)))


def check_vectors(vectors: object, *, expected: int, dimension: int, model_id: str) -> list[list[float]]:
    """Validate an embedder's output and scale each vector to unit length.

    Raises ``EmbedderError`` naming the model and the fault: a wrong number of vectors, a vector
    of the wrong length, a value that is not a number (bools included), NaN, an infinite value,
    or a zero vector (it has no direction). Accepts nested lists or tuples, numpy arrays, or any
    iterable of iterables of real numbers; returns fresh ``list[list[float]]``.
    """
    who = f"embedder {model_id!r}"
    rows = _as_list(vectors, who, "its output")
    if len(rows) != expected:
        raise EmbedderError(f"{who} returned {len(rows)} vectors for {expected} texts")
    checked: list[list[float]] = []
    for i, row in enumerate(rows):
        values = _as_list(row, who, f"vector {i}")
        if len(values) != dimension:
            raise EmbedderError(f"{who}: vector {i} has length {len(values)}, expected {dimension}")
        if _plain_finite(values):
            floats = cast("list[float]", values)
        else:
            floats = [_number(value, who, f"vector {i} at index {j}") for j, value in enumerate(values)]
        norm = math.hypot(*floats)
        if norm == 0.0 or not math.isfinite(norm):
            raise EmbedderError(f"{who}: vector {i} has norm {norm} and cannot be scaled to unit length")
        checked.append([value / norm for value in floats])
    return checked


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Checked:
    """An embedder whose output is always usable, or an ``EmbedderError``.

    It takes the inner embedder's ``model_id`` and ``dimension``, checked once at construction (a
    ``ConfigError`` if unusable). Each call validates the batch of texts, returns ``[]`` for an empty
    batch without calling the inner embedder, turns any exception the inner embedder raises into an
    ``EmbedderError`` (the original as its ``__cause__``), and passes the output through
    ``check_vectors``. An async-only inner embedder (a coroutine ``aembed``, no ``embed``) serves
    ``embed`` too: its coroutine runs on a private event loop in a daemon thread of the wrapper
    (``embed.loop``), cancelled after ``timeout`` seconds (``ASYNC_TIMEOUT`` when not given).
    """

    def __init__(self, embedder: Embedder | AsyncEmbedder) -> None:
        try:
            model_id = getattr(embedder, "model_id", None)
            dimension = getattr(embedder, "dimension", None)
        except Exception as exc:  # a property that raises: the embedder cannot say what it is
            kind = type(embedder).__name__
            raise ConfigError(f"embedder {kind}: reading its model_id or dimension failed: {exc}") from exc
        if not isinstance(model_id, str) or not model_id.strip():
            raise ConfigError(f"embedder {embedder!r}: model_id must be a non-empty string, got {model_id!r}")
        if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension <= 0:
            raise ConfigError(f"embedder {model_id!r}: dimension must be a positive int, got {dimension!r}")
        if not callable(getattr(embedder, "embed", None)) and not callable(getattr(embedder, "aembed", None)):
            raise ConfigError(f"embedder {model_id!r} has neither embed(texts) nor aembed(texts)")
        self.inner = embedder
        self.model_id: str = model_id
        self.dimension: int = dimension
        self._loop = None if callable(getattr(embedder, "embed", None)) else LoopThread("afteraction-aembed")

    def __repr__(self) -> str:
        return f"Checked({self.inner!r})"

    def _fail(self, exc: Exception) -> EmbedderError:
        return EmbedderError(f"embedder {self.model_id!r} failed: {_describe(exc)}")

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> list[list[float]]:
        """Embed ``texts``: one unit vector each, or ``EmbedderError``. ``timeout`` bounds an
        async-only embedder's coroutine (its ``__cause__`` is then ``Overdue``); a blocking
        ``embed`` cannot be interrupted and runs to its end."""
        batch = check_texts(texts)
        if not batch:
            return []
        try:
            if self._loop is None:
                raw: object = cast("Embedder", self.inner).embed(batch)
            else:
                inner = cast("AsyncEmbedder", self.inner)
                raw = self._loop.run(lambda: inner.aembed(batch), ASYNC_TIMEOUT if timeout is None else timeout)
        except EmbedderError:
            raise
        except Exception as exc:
            raise self._fail(exc) from exc
        return check_vectors(raw, expected=len(batch), dimension=self.dimension, model_id=self.model_id)

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        """``embed`` without blocking the event loop: the inner ``aembed`` if it has one, else a thread."""
        batch = check_texts(texts)
        if not batch:
            return []
        try:
            raw: object = await aembed(self.inner, batch)
        except EmbedderError:
            raise
        except Exception as exc:
            raise self._fail(exc) from exc
        return check_vectors(raw, expected=len(batch), dimension=self.dimension, model_id=self.model_id)


async def aembed(embedder: Embedder | AsyncEmbedder, texts: Sequence[str]) -> list[list[float]]:
    """Embed from async code: ``embedder.aembed`` when it has one, else ``embed`` in a worker thread.

    No checking here: wrap the embedder in ``Checked`` for that.
    """
    native = getattr(embedder, "aembed", None)
    if native is not None and inspect.iscoroutinefunction(native):
        result: list[list[float]] = await native(texts)
        return result
    if not isinstance(embedder, Embedder):
        raise ConfigError(f"{embedder!r} has neither aembed nor embed")
    return await asyncio.to_thread(embedder.embed, texts)
