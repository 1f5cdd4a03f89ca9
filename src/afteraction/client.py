"""The remote client: a ``Memory`` whose store is an afteraction service.

``Memory.open("http://host:8787", api_key=…)`` returns a ``RemoteMemory``. It records runs
in-process exactly as a local ``Memory`` does (capture, sanitizing, the host's checks and
the lesson are all made here, on the host), then sends the finished lesson to the service;
search, the reference block, lessons and outcomes are answered by the service, in the
tenant the API key belongs to. ``mem.aio`` is its async face, as for a local memory.

A slow service costs a caller a bounded wait: each request gives up after ``timeout`` seconds in
all (10 by default), a search or a block, which a run waits for before it starts, after
``search_timeout`` (2), as a ``StoreError`` (``_within``); a run's finish (its lesson and its outcomes)
after ``timeout`` in all (``finish_deadline``). httpx's own timeout bounds each read,
not a whole request: a service answering a byte at a time held a run for as long as it liked.

Each call answers as a local memory's does: its arguments are checked, and its text cleaned, before
anything is sent (``client_checks``), so a bad one is the same ``ValidationError``. Errors keep their
meaning across the wire (``client_answers``): the service's 400 is a ``ValidationError`` naming the
same field, 401/403 ``AuthError``/``ForbiddenError``, 404 ``NotFoundError``, 409 ``ConflictError``; a
service that cannot be reached, answers 5xx or 429 is a ``StoreError``; what an error quotes of an
answer is one line, its control characters escaped, its secrets scrubbed. Inside a running agent none
of them raise (the recorder and integrations report them).

What a remote memory cannot say: whether the service has embedded what it stored (``wait_indexed``
is True at once) and how its vector channel fared (``channel_status`` is ``not_configured``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

import httpx

from afteraction import arguments, client_checks
from afteraction.client_answers import parsed, raise_for, read
from afteraction.core.redact import redact_url, scrub_text
from afteraction.core.render import DEFAULT_BLOCK, BlockOptions, Layout
from afteraction.core.sanitize import LIMITS, Limits
from afteraction.errors import ConfigError, NotFoundError, StoreError, ValidationError
from afteraction.feedback import OUTCOME_ATTEMPTS
from afteraction.memory import Memory, _utc_now
from afteraction.model import Experience, Hit, Lesson, Scope, Status, _check
from afteraction.recorder import ErrorHandler, log_error
from afteraction.searching import MAX_K, ChannelNotes
from afteraction.store.base import check_owner, check_page
from afteraction.vector_channel import ChannelStatus

__all__ = ["RemoteMemory"]

_PAGE = 500  # the service's largest page (``server.common.Limits.page``)
SEARCH_TIMEOUT = 2.0  # seconds a search or a block may take in all (``RemoteMemory(search_timeout=)``)
_IN_FLIGHT = 16  # requests at once per RemoteMemory; a thread a stalled service holds counts until it ends
T = TypeVar("T")


def _within(seconds: float, slots: threading.BoundedSemaphore, work: Callable[[], T]) -> T:
    """``work()`` in a daemon thread, waited for at most ``seconds`` in all (TimeoutError after).
    A thread left behind ends when its request does (httpx's read timeout, or ``close``);
    ``slots`` bounds how many can be, and a call finding none free within ``seconds`` times out."""
    start = time.monotonic()
    if not slots.acquire(timeout=seconds):
        raise TimeoutError
    done, result, error = threading.Event(), list[T](), list[BaseException]()

    def run() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # handed to the caller, whatever it is
            error.append(exc)
        finally:
            slots.release()
            done.set()

    threading.Thread(target=run, name="afteraction-remote", daemon=True).start()
    if not done.wait(max(0.0, seconds - (time.monotonic() - start))):
        raise TimeoutError
    if error:
        raise error[0]
    return result[0]


def _scope_params(scope: Scope) -> dict[str, str]:
    """The scope as query parameters, its tenant included: the service refuses (403) a tenant that is not the
    key's, as it does in a body, rather than answer for the key's own."""
    return dict(arguments.host_scope(scope).to_dict())


def _shown(url: str) -> str:
    """``url`` as a message shows it: its password masked (``http://admin:***@host``), or, with none, any
    secret in it scrubbed (a token given as its user, ``http://ghp_…@host``)."""
    masked = redact_url(url)
    return masked if masked != url else scrub_text(url)


class RemoteMemory(Memory):
    """Verified experience kept by an afteraction service, used like a local ``Memory``."""

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        timeout: float = 10.0,
        search_timeout: float = SEARCH_TIMEOUT,
        on_error: ErrorHandler | None = None,
        allow_args: Sequence[str] = (),
        limits: Limits = LIMITS,
        block: BlockOptions = DEFAULT_BLOCK,
        clock: Callable[[], datetime] = _utc_now,
        transport: httpx.BaseTransport | None = None,
        embedder: Any = None,
        vector_budget: Any = None,
        weights: Any = None,
    ) -> None:
        """``embedder``, ``vector_budget`` and ``weights`` are a local memory's: the service searches with its
        own, so they are accepted (``Memory.open(embedder=None)`` works whatever the URL) and not used."""
        if not url[:8].lower().startswith(("http://", "https://")):
            raise ConfigError(f"RemoteMemory needs an http:// or https:// URL, got {_shown(url)!r}")
        if api_key is not None and (not isinstance(api_key, str) or not api_key.strip()):
            raise ConfigError("api_key must be a non-empty string (or None for a --dev server)")
        for name, value in (("timeout", timeout), ("search_timeout", search_timeout)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ConfigError(f"{name} must be a positive number of seconds, got {value!r}")
        headers = {"user-agent": "afteraction-client"}
        if api_key is not None:
            headers["authorization"] = f"Bearer {api_key}"
        self.url = url.rstrip("/")
        self._where = _shown(self.url)  # the URL as shown: repr, errors, logs
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout, transport=transport)
        self.timeout, self.search_timeout = float(timeout), float(min(search_timeout, timeout))
        self._slots = threading.BoundedSemaphore(_IN_FLIGHT)
        self._deadline = threading.local()  # ``finish_deadline``'s, per thread
        self.on_error = on_error or log_error
        self.allow_args = arguments.allowed(allow_args)
        self.limits = limits
        self.block_options = block
        self._clock = clock
        self._indexer = None  # the service indexes what it stores
        remote = ChannelStatus("not_configured", "a remote memory: the service runs both channels")
        self._notes = ChannelNotes(remote, self.report)

    def __repr__(self) -> str:
        return f"RemoteMemory({self._where!r})"  # never the key, nor a password in the URL

    @contextlib.contextmanager
    def finish_deadline(self) -> Iterator[None]:
        """The requests this thread makes inside share one ``timeout``: a run's finish (its lesson,
        then an outcome for each lesson it was given) waits ``timeout`` in all, not once per request."""
        if getattr(self._deadline, "at", None) is not None:  # inside another: that one holds
            yield
            return
        self._deadline.at = time.monotonic() + self.timeout
        try:
            yield
        finally:
            self._deadline.at = None

    def _call(
        self,
        method: str,
        path: str,
        *,
        within: float | None = None,
        field_of: Callable[[str], str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """The service's JSON answer, waited for at most ``within`` seconds (``timeout`` by default),
        and no later than the thread's ``finish_deadline``; ``field_of`` as for ``client_answers.raise_for``."""
        seconds = self.timeout if within is None else within
        said, ends = f"{seconds:g} s", getattr(self._deadline, "at", None)
        left = seconds if ends is None else ends - time.monotonic()
        if left < seconds:
            seconds, said = left, f"{self.timeout:g} s (the run's finish, in all)"
            if seconds <= 0:
                raise StoreError(f"{method} {path}: not sent: the run's finish had used its {self.timeout:g} s")
        try:
            response = _within(seconds, self._slots, lambda: self._http.request(method, path, **kwargs))
        except TimeoutError:
            raise StoreError(f"{method} {path}: the service at {self._where} did not answer within {said}") from None
        except httpx.HTTPError as exc:
            shown = str(exc).replace(self.url, self._where)
            raise StoreError(f"cannot reach the afteraction service at {self._where}: {shown}") from exc
        raise_for(response, field_of)
        try:
            return response.json()
        except ValueError as exc:  # a 2xx that is not JSON: not an afteraction service, or a proxy's page
            raise StoreError(f"{method} {path}: the service answered {response.status_code} with no JSON") from exc

    # -- recording -----------------------------------------------------------------------

    def wait_indexed(self, timeout: float | None = None) -> bool:
        """True at once: a remote memory indexes nothing itself. The service embeds what it stores in the
        background of its own process, and this neither waits for that nor tells whether it is done: a
        search or block made at once may be ranked there by text alone (``channel_status`` cannot say)."""
        return True

    @property
    def channel_status(self) -> ChannelStatus:
        """Always ``not_configured``: how the service's vector channel fared is not in its answers."""
        return self._notes.status

    def _store_finished(self, experience: Experience) -> Experience:
        if self.add(experience):
            return experience
        try:  # a finish of the same run stored it before: that record stays
            return self.get(experience.id, scope=experience.scope)
        except NotFoundError:
            return experience

    def add(self, experience: Experience) -> bool:
        if not isinstance(experience, Experience):
            raise ValidationError("experience", f"must be an Experience, got {type(experience).__name__}")
        return self.add_many([experience]) == 1

    def add_many(self, experiences: Iterable[Experience]) -> int:
        """``Memory.add_many`` on the service: a repeated id counts as not new (the first is kept), and a
        lesson the service would refuse is named (``experiences[i]``) before anything is sent. A batch over
        1,000 lessons (or 15 MiB of JSON), more than one request takes, is sent in several, each stored on
        its own: **not one transaction** (a request that fails leaves the ones before it stored; sending
        the batch again stores the rest, as ``add`` is idempotent by id). See ``client_checks.batches``."""
        batches = client_checks.batches(list(arguments.experiences(experiences)))
        stored = 0
        for n, body in enumerate(batches.bodies):
            headers = {"content-type": "application/json"}
            found = self._call(
                "POST", "/experience/lessons", content=body, headers=headers, field_of=partial(batches.field, n)
            )
            stored += int(read(found, "stored"))
        return stored

    # -- retrieval -----------------------------------------------------------------------

    def search(self, query: str, *, scope: Scope, k: int = 5, env: Mapping[str, str] | None = None) -> list[Hit]:
        scope, env = arguments.host_scope(scope), arguments.environment(env)
        text, k = client_checks.query(query), client_checks.k(k)
        body: dict[str, Any] = {"query": text, "scope": scope.to_dict(), "k": k}
        if env is not None:
            body["env"] = {name: str(value) for name, value in env.items()}  # as a local memory reads them
        found = self._call("POST", "/experience/search", within=self.search_timeout, json=body)
        return [parsed(Hit.from_dict, item) for item in read(found, "hits")]

    def _ranked(self, query: str, scope: Scope, k: int, env: Mapping[str, str] | None) -> list[Hit]:
        """What a run's block (``Memory._block``) goes through: the service's best ``MAX_K``, as far as a local
        memory's ranking reaches (every relevant candidate, ``searching.ranked``), so that the block goes
        past a record too large for its bounds, and past the copies of one fix, to other lessons, and counts
        the copies it read ("N more runs"). The service's best ``2 k`` ended the block at the last of them."""
        return self.search(query, scope=scope, k=MAX_K, env=env)

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
        bounds = {"max_records": max_records, "max_bytes": max_bytes, "max_tokens": max_tokens}
        options = self.block_options.with_(layout=layout, **bounds)  # checked first, as a local memory does
        text = client_checks.query(task, "task")
        scope, env = arguments.host_scope(scope), arguments.environment(env)
        body: dict[str, Any] = {
            "task": text,
            "scope": scope.to_dict(),
            "layout": options.layout,
            "max_records": options.max_records,
            "max_bytes": options.max_bytes,
            "max_tokens": options.max_tokens,
        }
        if env is not None:
            body["env"] = {name: str(value) for name, value in env.items()}
        return str(read(self._call("POST", "/experience/block", within=self.search_timeout, json=body), "block"))

    def lessons(
        self, *, scope: Scope, limit: int = 50, offset: int = 0, status: Status | str | None = None
    ) -> list[Lesson]:
        """``Memory.lessons`` on the service, any ``limit`` (0 gives none) read in pages of up to 500 (the
        service's largest); a lesson stored while they are read may shift one from a page to the next."""
        params: dict[str, Any] = _scope_params(scope)
        if status is not None:
            params["status"] = Status.parse(status).value
        limit, offset = _check.integer(limit, "limit"), _check.integer(offset, "offset")
        found: list[Lesson] = []
        if not check_page(limit, offset):
            return found
        while len(found) < limit:
            page = min(limit - len(found), _PAGE)
            answer = self._call("GET", "/experience/lessons", params={**params, "limit": page, "offset": offset})
            items = read(answer, "lessons")
            found += [
                Lesson(parsed(Experience.from_dict, item), bool(item.get("eligible")), item.get("reason"))
                for item in items[:page]
            ]
            if len(items) < page:
                break
            offset += page
        return found

    def get(self, id: str, *, scope: Scope) -> Experience:
        params, known_id = _scope_params(scope), arguments.lesson_id(id)
        if known_id is None:  # as a local memory answers an id no lesson can have
            raise NotFoundError(f"no lesson {str(id)[:120]!r} in this scope")
        path = f"/experience/lessons/{client_checks.segment(known_id)}"
        return parsed(Experience.from_dict, self._call("GET", path, params=params))

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
        """``Memory.record_outcome`` on the service. The service reads the lesson and retries
        when another writer got there first itself, so ``attempts`` and ``known`` (a local
        store's shortcuts) are checked as a local memory checks them and not sent."""
        scope, _ = arguments.host_scope(scope), _check.integer(attempts, "attempts", minimum=1)
        body = client_checks.outcome(id, scope, success=success, key=key, task=task, known=known, limits=self.limits)
        if arguments.lesson_id(id) is None:  # as a local memory answers an id no lesson can have
            raise NotFoundError(f"no lesson {str(id)[:120]!r} in this scope")
        path = f"/experience/lessons/{client_checks.segment(id)}/outcome"
        return parsed(Experience.from_dict, self._call("POST", path, json=body))

    def set_status(
        self, id: str, status: Status | str, *, scope: Scope, reason: str = "", attempts: int = OUTCOME_ATTEMPTS
    ) -> Experience:
        """``Memory.set_status`` on the service (which retries a lost race itself: ``attempts`` is not sent)."""
        scope, _ = arguments.host_scope(scope), _check.integer(attempts, "attempts", minimum=1)
        body = client_checks.status(scope, status, reason, self.limits)  # the decision first, as a local memory
        if arguments.lesson_id(id) is None:
            raise NotFoundError(f"no lesson {str(id)[:120]!r} in this scope")
        path = f"/experience/lessons/{client_checks.segment(id)}/status"
        return parsed(Experience.from_dict, self._call("POST", path, json=body))

    def forget(self, id: str, *, scope: Scope) -> bool:
        """``Memory.forget`` on the service: ``DELETE /experience/lessons/{id}``."""
        params, known_id = _scope_params(scope), arguments.lesson_id(id)
        if known_id is None:  # as a local memory answers an id no lesson can have
            return False
        found = self._call("DELETE", f"/experience/lessons/{client_checks.segment(known_id)}", params=params)
        deleted = read(found, "deleted")
        if not isinstance(deleted, bool):
            raise StoreError("the service's answer has no boolean 'deleted': is this URL an afteraction service?")
        return deleted

    def forget_user(self, user: str, *, tenant: str) -> list[str]:
        """``Memory.forget_user`` on the service: ``DELETE /experience/users/{user}/lessons``."""
        tenant, user = check_owner(tenant, user)
        path = f"/experience/users/{client_checks.segment(user)}/lessons"
        found = self._call("DELETE", path, params={"tenant": tenant})
        ids = read(found, "ids")
        if not isinstance(ids, list) or not all(isinstance(id, str) for id in ids):
            raise StoreError("the service's answer has no list of 'ids': is this URL an afteraction service?")
        return ids

    # -- maintenance ---------------------------------------------------------------------

    def export(self, tenant: str | None = None) -> Iterator[Experience]:
        raise ConfigError("export reads the whole store: run `afteraction export` where the service's database is")

    def close(self, timeout: float = 0.0) -> None:
        if (face := self.__dict__.get("aio")) is not None:
            face._release()  # the async face's threads end when their calls have
        self._http.close()
