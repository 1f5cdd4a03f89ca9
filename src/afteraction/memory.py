"""Memory: the facade that wires the core, a store, an embedder and the clock.

Search is hybrid when the store keeps vectors and an embedder is configured (by default the
bundled one, when the ``embed`` extra is installed): the query is embedded while the text search
runs, the two candidate lists are fused and ranked (``core.fusion``, ``core.rank``). The vector
channel fails open to text within ``vector_budget`` seconds and says why (``channel_status``).
Records are embedded in the background after they commit (``indexing.Indexer``).

``Memory`` is the one implementation; ``AsyncMemory`` (``memory_async``) is its async face
(each call runs the same code in a worker thread). Set-up fails fast with a clear error; inside a running agent
(``RunRecorder``, integrations) nothing raises: failures go to ``on_error``.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from functools import cached_property, partial
from pathlib import Path
from typing import Any

from afteraction import arguments, learning
from afteraction.core.capture import clean_env, clean_experience
from afteraction.core.ids import own_id
from afteraction.core.rank import DEFAULT_WEIGHTS, Weights
from afteraction.core.render import DEFAULT_BLOCK, BlockOptions, Layout, block_with_copies
from afteraction.core.sanitize import LIMITS, Limits
from afteraction.core.text import MAX_QUERY_TERMS
from afteraction.core.verify import Verifier
from afteraction.embed.base import AsyncEmbedder, Embedder
from afteraction.errors import ConfigError, ConflictError, NotFoundError, ValidationError
from afteraction.feedback import OUTCOME_ATTEMPTS, change_status, count_outcome
from afteraction.forgetting import forget, forget_user
from afteraction.indexing import Indexer
from afteraction.memory_async import AsyncMemory
from afteraction.model import Experience, Hit, Lesson, Run, Scope, Skill, Status, _check
from afteraction.recorder import RunRecorder
from afteraction.reporting import ErrorHandler, deliver, log_error
from afteraction.searching import MAX_K, MAX_QUERY_CHARS, ChannelNotes, query_text, ranked, whole
from afteraction.settings import api_key, database_url
from afteraction.store import Store, open_store
from afteraction.store.base import VectorStore
from afteraction.vector_channel import DEFAULT_BUDGET, DEFAULT_EMBEDDER, ChannelStatus, VectorChannel, resolve_embedder

__all__ = ["DEFAULT_EMBEDDER", "MAX_QUERY_CHARS", "MAX_QUERY_TERMS", "AsyncMemory", "Lesson", "Memory"]

#: Seconds ``close()`` lets background indexing finish what is queued.
CLOSE_TIMEOUT = 2.0


_utc_now = partial(datetime.now, timezone.utc)


class Memory:
    """Verified experience for agents, over one store.

    ``embedder``: the bundled offline embedder by default (when the ``embed`` extra is installed
    and the store keeps vectors), loaded in the background; any ``Embedder``; or None for text
    search only. ``vector_budget``: seconds the vector channel may take per search before search
    goes on by text alone. ``on_error`` may be ``async`` (``afteraction.reporting``).
    """

    #: The event loop the async face was last used from: where an async ``on_error`` runs.
    _loop: asyncio.AbstractEventLoop | None = None

    def __init__(
        self,
        store: Store,
        *,
        on_error: ErrorHandler | None = None,
        allow_args: Sequence[str] = (),
        limits: Limits = LIMITS,
        weights: Weights = DEFAULT_WEIGHTS,
        block: BlockOptions = DEFAULT_BLOCK,
        clock: Callable[[], datetime] = _utc_now,
        embedder: Embedder | AsyncEmbedder | None = DEFAULT_EMBEDDER,
        vector_budget: float = DEFAULT_BUDGET,
    ) -> None:
        if not isinstance(store, Store):
            raise ConfigError(f"Memory needs a Store, got {type(store).__name__}")
        if not callable(clock):
            raise ConfigError(f"clock must be a function returning an aware datetime, got {type(clock).__name__}")
        lazy, why_not = resolve_embedder(store, embedder)
        self._channel = VectorChannel(store, lazy, budget=vector_budget, why_not=why_not)
        self._notes = ChannelNotes(ChannelStatus("not_configured", self._channel.why_not), self.report)
        self.store = store
        self.on_error: ErrorHandler = on_error or log_error
        self.allow_args = arguments.allowed(allow_args)
        self.limits = limits
        self.weights = weights
        self.block_options = block
        self._clock = clock
        self._indexer: Indexer | None = None
        if self._channel.configured and isinstance(store, VectorStore):
            self._indexer = Indexer(store, lazy, report=self.report)
            self._indexer.start()  # loads the embedder, then backfills records without vectors

    @classmethod
    def open(cls, url: str | Path | None = None, **options: Any) -> Memory:
        """Open a store: an SQLite file path (default ``./.afteraction/memory.db``, or
        ``$AFTERACTION_DATABASE_URL``), ``":memory:"``, ``"postgresql://…"``, or an afteraction
        service ``"http(s)://host:port"`` (``api_key=…`` or ``$AFTERACTION_API_KEY``; returns a
        ``RemoteMemory``, see ``afteraction.client``). Options as for ``Memory(...)``."""
        target = database_url(os.environ) if url is None else str(url)
        if target[:8].lower().startswith(("http://", "https://")):
            return _remote(target, options)
        return cls(open_store(target), **options)

    def now(self) -> datetime:
        """The host's clock, read when needed (never at set-up: a clock may tick on each read)."""
        return arguments.aware(self._clock())

    def report(self, exc: BaseException, where: str) -> None:
        """Hand a swallowed failure to ``on_error``; never raises."""
        deliver(self.on_error, exc, where, self._loop)

    # -- recording -----------------------------------------------------------------------

    def run(
        self,
        task: str,
        *,
        scope: Scope,
        env: Mapping[str, str] | None = None,
        verify: Sequence[Verifier] = (),
        allow_args: Sequence[str] | None = None,
        skill: Skill | None = None,
        run_id: str | None = None,
        on_error: ErrorHandler | None = None,
        feedback: bool = True,
    ) -> RunRecorder:
        """Start recording a run of ``task``. Leaving the ``with`` block (or ``finish()``)
        verifies it; a verified run becomes a Validated lesson, a failed one Quarantined.
        Pass the host's ``run_id`` to make retries idempotent. Each lesson the run is given by
        ``run.reference_block()`` or ``run.search()`` gets its verdict as a reuse outcome at the
        end if it applied the lesson's fix, unless ``feedback`` is False."""
        scope = arguments.host_scope(scope)
        if not isinstance(task, str) or not task.strip():
            raise ValidationError("task", "must be a non-blank string")
        return RunRecorder(
            self,
            run_id=arguments.run_id(run_id) or f"run_{uuid.uuid4().hex}",
            task=task,  # scrubbed when first read: in the async face's threads, not on the loop
            scope=scope,
            env=clean_env(env),
            verifiers=arguments.verifiers(verify),
            allow_args=self.allow_args if allow_args is None else arguments.allowed(allow_args),
            skill=arguments.skill(skill),
            limits=self.limits,
            on_error=on_error or self.on_error,
            started_at=self.now(),
            feedback=feedback,
        )

    def learn(
        self,
        run: Run,
        *,
        verify: Sequence[Verifier] = (),
        allow_args: Sequence[str] | None = None,
        skill: Skill | None = None,
        given: Sequence[str] = (),
    ) -> Experience | None:
        """Verify, distill and store a run recorded elsewhere (e.g. assembled from events with
        ``afteraction.core.assemble``), sanitized as the recorder does: the stored Experience, or
        None without a verdict; a running run is refused. ``given``: ids of the lessons it was
        given, which get its verdict when it applied their fix (``afteraction.feedback``)."""
        return learning.learn(self, run, verify=verify, allow_args=allow_args, skill=skill, given=given).lesson

    def _store_finished(self, experience: Experience) -> Experience:
        """The record stored for a finished run: this one, or the one a finish of the same run stored before.
        ConflictError when the id is another scope's in the tenant (a record added under it): nothing stored."""
        if self.store.put(experience):
            self._index([experience])
            return experience
        stored = self.store.get(experience.scope, experience.id)  # ids derive from the run: the first stays
        if stored is None or stored.scope != experience.scope:
            raise ConflictError(f"lesson {experience.id!r} is another scope's in this tenant: this run's not stored")
        return stored

    def _index(self, experiences: Sequence[Experience]) -> None:
        if self._indexer is not None:
            self._indexer.enqueue(experiences)

    def wait_indexed(self, timeout: float | None = None) -> bool:
        """Wait until records written so far have vectors (or failed, reported through
        ``on_error``), the embedder is loaded and the backfill of older records is done. True when
        that happened within ``timeout`` seconds; True at once when there is no vector channel. After
        ``close``: False when work was left undone (the next backfill finds it)."""
        return True if self._indexer is None else self._indexer.wait(timeout)

    @property
    def channel_status(self) -> ChannelStatus:
        """How the vector channel fared in this thread's last search (``reason`` "ok" when it ran);
        in a thread that has not searched, in the last search of any thread."""
        return self._notes.status

    def add(self, experience: Experience) -> bool:
        """Store an existing lesson, keeping its id unless it takes another's (``core.ids.own_id``), scrubbed
        as a recorded run's are (``core.capture.clean_experience``). False when a record with that id
        already exists in its tenant (the stored one is kept)."""
        if not isinstance(experience, Experience):
            raise ValidationError("experience", f"must be an Experience, got {type(experience).__name__}")
        experience = own_id(clean_experience(experience, self.limits))
        added = self.store.put(experience)
        if added:
            self._index([experience])
        return added

    def add_many(self, experiences: Iterable[Experience]) -> int:
        """Store several in one transaction, each as ``add`` does; the number that were new."""
        batch = [
            own_id(clean_experience(experience, self.limits)) if isinstance(experience, Experience) else experience
            for experience in arguments.experiences(experiences)
        ]
        added = self.store.put_many(batch)
        if added:  # only what this call stored: a duplicate's vector would replace the kept record's
            self._index(batch if added == len(batch) else [e for e in batch if self.store.get(e.scope, e.id) == e])
        return added

    # -- retrieval -----------------------------------------------------------------------

    def search(self, query: str, *, scope: Scope, k: int = 5, env: Mapping[str, str] | None = None) -> list[Hit]:
        """The ``k`` best eligible, relevant lessons for ``query`` that ``scope`` may see. A query
        over ``MAX_QUERY_CHARS`` characters is cut there. ``channel_status`` then tells whether the
        vector channel ran, and if not why."""
        hits = self._ranked(query, scope, k, env)
        return whole(hits, k)

    def _ranked(self, query: str, scope: Scope, k: int, env: Mapping[str, str] | None) -> list[Hit]:
        scope, env = arguments.host_scope(scope), arguments.environment(env)
        if not isinstance(query, str):
            raise ValidationError("query", f"must be a string, got {type(query).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise ValidationError("k", f"must be an integer from 1 to {MAX_K}")
        now = self.now()
        hits, status = ranked(
            self.store, self._channel, self.weights, query_text(query), scope=scope, now=now, k=k, env=env
        )
        self._notes.note(status)
        return hits

    def reference_block(
        self,
        task: str,
        *,
        scope: Scope,
        env: Mapping[str, str] | None = None,
        layout: Layout | None = None,
        max_records: int | None = None,
        max_bytes: int | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """The block to inject for ``task``: "" when no lesson qualifies. Inside a run, ask the run
        (``run.reference_block()``): then its lessons get the run's verdict when it ends."""
        bounds = {"max_records": max_records, "max_bytes": max_bytes, "max_tokens": max_tokens}
        return self.block_with_hits(task, scope=scope, env=env, layout=layout, **bounds)[0]

    def block_with_hits(
        self,
        task: str,
        *,
        scope: Scope,
        env: Mapping[str, str] | None = None,
        layout: Layout | None = None,
        max_records: int | None = None,
        max_bytes: int | None = None,
        max_tokens: int | None = None,
    ) -> tuple[str, tuple[Hit, ...]]:
        """``reference_block``'s block for ``task`` and the hits it shows (what a run was given)."""
        options = self.block_options.with_(
            layout=layout, max_records=max_records, max_bytes=max_bytes, max_tokens=max_tokens
        )
        return self._block(task, scope, env, options)[:2]

    def _block(
        self, task: str, scope: Scope, env: Mapping[str, str] | None, options: BlockOptions
    ) -> tuple[str, tuple[Hit, ...], tuple[tuple[Experience, ...], ...]]:
        """The block, the hits it shows and the copies each stands for (``core.render.block_with_copies``)."""
        if not isinstance(task, str):
            raise ValidationError("task", f"must be a string, got {type(task).__name__}")
        hits = self._ranked(task, scope, k := min(options.max_records, MAX_K), env)
        found, window = block_with_copies(whole(hits, k), options, complete=len(hits) < k), k
        while len(found[1]) < k and window < len(hits):  # records too large for the bounds, or copies: further
            window = min(2 * window, len(hits))
            found = block_with_copies(whole(hits, window), options, complete=len(hits) <= window)
        return found

    def lessons(
        self, *, scope: Scope, limit: int = 50, offset: int = 0, status: Status | str | None = None
    ) -> list[Lesson]:
        """Stored lessons ``scope`` sees, newest first, each with whether it may be injected."""
        scope, wanted = arguments.host_scope(scope), None if status is None else Status.parse(status)
        limit, offset = _check.integer(limit, "limit"), _check.integer(offset, "offset")
        now, floor = self.now(), self.weights.min_confidence
        found = self.store.lessons(scope, limit=limit, offset=offset, status=wanted)
        return [Lesson.at(experience, now, min_confidence=floor) for experience in found]

    def get(self, id: str, *, scope: Scope) -> Experience:
        scope, known_id = arguments.host_scope(scope), arguments.lesson_id(id)
        found = None if known_id is None else self.store.get(scope, known_id)
        if found is None:
            raise NotFoundError(f"no lesson {str(id)[:120]!r} in this scope")
        return found

    # -- feedback ------------------------------------------------------------------------

    def record_outcome(
        self,
        id: str,
        *,
        scope: Scope,
        success: bool,
        key: str | None = None,
        task: str | None = None,
        attempts: int = OUTCOME_ATTEMPTS,
        known: Experience | None = None,
    ) -> Experience:
        """One more independent reuse outcome for lesson ``id``: updates confidence and status,
        retrying when another writer got there first. Under a ``key`` (the run it came from) it
        counts once. A success's ``task`` (the run's request) becomes a wording the lesson is
        found by, if all who see the lesson may see ``scope``'s (``core.trust.wording_may_join``).
        ``known``: the lesson as a search in ``scope`` returned it, to skip reading it again."""
        scope, attempts = arguments.host_scope(scope), _check.integer(attempts, "attempts", minimum=1)
        return count_outcome(self, id, scope=scope, success=success, key=key, task=task, attempts=attempts, known=known)

    def set_status(
        self, id: str, status: Status | str, *, scope: Scope, reason: str = "", attempts: int = OUTCOME_ATTEMPTS
    ) -> Experience:
        """A person's decision about lesson ``id``: ``revoked``, ``superseded`` or ``stale`` (never injected), or
        ``validated`` to reinstate it; ``reason`` is kept with it (``core.trust.set_status``)."""
        scope, attempts = arguments.host_scope(scope), _check.integer(attempts, "attempts", minimum=1)
        return change_status(self, id, status, scope=scope, reason=reason, attempts=attempts)

    def forget(self, id: str, *, scope: Scope) -> bool:
        """Delete lesson ``id``, its search rows and vectors; False when ``scope`` sees none (``forgetting``)."""
        return forget(self, id, scope=arguments.host_scope(scope))

    def forget_user(self, user: str, *, tenant: str) -> list[str]:
        """Delete every lesson stored for ``user`` in ``tenant``, in any app or project; their ids (``forgetting``)."""
        return forget_user(self, user, tenant=tenant)

    # -- maintenance ---------------------------------------------------------------------

    def export(self, tenant: str | None = None) -> Iterator[Experience]:
        """Every stored record (of one tenant), for the host's own export."""
        return self.store.iter_all(tenant)

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Let background indexing finish what is queued (at most ``timeout`` seconds; what is
        left is found by the next backfill), then close the store. The async face's threads end
        when their calls have."""
        if (face := self.__dict__.get("aio")) is not None:
            face._release()
        if self._indexer is not None:
            self._indexer.close(timeout)
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @cached_property
    def aio(self) -> AsyncMemory:
        """The async face of this memory (one per memory: it owns the threads its calls run in)."""
        return AsyncMemory(self)


def _remote(url: str, options: dict[str, Any]) -> Memory:
    try:
        from afteraction.client import RemoteMemory  # the service's client lives at the edge
    except ImportError as exc:  # pragma: no cover - the client extra is part of the dev install
        raise ConfigError(f"{url}: a remote Memory needs httpx: pip install 'afteraction[client]'") from exc
    return RemoteMemory(url, **{"api_key": api_key(os.environ), **options})  # the caller's options untouched
