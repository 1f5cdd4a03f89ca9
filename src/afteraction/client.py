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

Errors keep their meaning across the wire: the service's 400 is a ``ValidationError``
naming the same field, 401/403 ``AuthError``/``ForbiddenError``, 404 ``NotFoundError``, 409
``ConflictError``; a service that cannot be reached, answers 5xx or 429 is a ``StoreError``.
Inside a running agent none of them raise (the recorder and integrations report them).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from afteraction import arguments
from afteraction.core.redact import redact_url, scrub_text
from afteraction.core.render import DEFAULT_BLOCK, BlockOptions, Layout
from afteraction.core.sanitize import LIMITS, Limits
from afteraction.errors import (
    AfterActionError,
    AppendOnlyError,
    AuthError,
    ConfigError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    StoreError,
    ValidationError,
)
from afteraction.feedback import OUTCOME_ATTEMPTS
from afteraction.memory import Memory, _utc_now
from afteraction.model import Experience, Hit, Lesson, Scope, Status, _check
from afteraction.recorder import ErrorHandler, log_error
from afteraction.searching import MAX_K, ChannelNotes
from afteraction.store.base import check_owner
from afteraction.vector_channel import ChannelStatus

__all__ = ["RemoteMemory"]

_PAGE = 500
_BATCH = 1000
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


def _raise_for(response: httpx.Response) -> None:
    """The error the service's answer stands for (nothing on 2xx)."""
    if response.is_success:
        return
    try:
        first = response.json()["errors"][0]
        field, message = first.get("field"), str(first.get("message"))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        field, message = None, response.text[:200] or response.reason_phrase
    status = response.status_code
    where = f"{response.request.method} {response.request.url.path}"
    if status in (400, 413, 415, 422):
        raise ValidationError(field or "request", message)
    errors: dict[int, type[AfterActionError]] = {
        401: AuthError,
        403: ForbiddenError,
        404: NotFoundError,
        409: ConflictError,
        501: AppendOnlyError,  # the deployment does not delete: its message names the GRANT
    }
    if status in errors:
        raise errors[status](f"{where}: {field}: {message}" if field else f"{where}: {message}")
    if status == 429:
        retry = response.headers.get("retry-after", "?")
        raise StoreError(f"{where}: rate limited by the service; retry after {retry} s")
    raise StoreError(f"{where}: the service answered {status}: {message}")


def _scope_params(scope: Scope) -> dict[str, str]:
    """The scope as query parameters, its tenant included: the service refuses (403) a tenant that is not the
    key's, as it does in a body, rather than answer for the key's own."""
    return dict(arguments.host_scope(scope).to_dict())


def _read(found: Any, name: str) -> Any:
    """``found[name]`` of the service's answer; StoreError when the answer has no such part."""
    if not isinstance(found, dict) or name not in found:
        raise StoreError(f"the service's answer has no {name!r}: is this URL an afteraction service?")
    return found[name]


def _parsed(parse: Callable[[Any], T], data: Any) -> T:
    """A record of the service's answer; StoreError (not the caller's ValidationError) when it is not one."""
    try:
        return parse(data)
    except ValidationError as exc:
        raise StoreError(f"the service answered a record afteraction cannot read: {exc}") from exc


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

    def _call(self, method: str, path: str, *, within: float | None = None, **kwargs: Any) -> Any:
        """The service's JSON answer, waited for at most ``within`` seconds (``timeout`` by default),
        and no later than the thread's ``finish_deadline``."""
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
        _raise_for(response)
        try:
            return response.json()
        except ValueError as exc:  # a 2xx that is not JSON: not an afteraction service, or a proxy's page
            raise StoreError(f"{method} {path}: the service answered {response.status_code} with no JSON") from exc

    # -- recording -----------------------------------------------------------------------

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
        batch = list(arguments.experiences(experiences))
        for i, experience in enumerate(batch):
            if not isinstance(experience, Experience):
                raise ValidationError(f"experiences[{i}]", f"must be an Experience, got {type(experience).__name__}")
        stored = 0
        for start in range(0, len(batch), _BATCH):
            chunk = [experience.to_dict() for experience in batch[start : start + _BATCH]]
            stored += int(_read(self._call("POST", "/experience/lessons", json={"lessons": chunk}), "stored"))
        return stored

    # -- retrieval -----------------------------------------------------------------------

    def search(self, query: str, *, scope: Scope, k: int = 5, env: Mapping[str, str] | None = None) -> list[Hit]:
        scope, env = arguments.host_scope(scope), arguments.environment(env)
        body: dict[str, Any] = {"query": query, "scope": scope.to_dict(), "k": k}
        if env is not None:
            body["env"] = {name: str(value) for name, value in env.items()}  # as a local memory reads them
        found = self._call("POST", "/experience/search", within=self.search_timeout, json=body)
        return [_parsed(Hit.from_dict, item) for item in _read(found, "hits")]

    def _ranked(self, query: str, scope: Scope, k: int, env: Mapping[str, str] | None) -> list[Hit]:
        """What ``block_with_hits`` (a run's block) goes through: the service's best ``2 k``, so that
        a record too large for the bounds gives way to the next, as in a local memory."""
        return self.search(query, scope=scope, k=min(2 * k, MAX_K), env=env)

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
        if not isinstance(task, str):
            raise ValidationError("task", f"must be a string, got {type(task).__name__}")
        scope, env = arguments.host_scope(scope), arguments.environment(env)
        base = self.block_options
        body: dict[str, Any] = {
            "task": task,
            "scope": scope.to_dict(),
            "layout": base.layout if layout is None else layout,
            "max_records": base.max_records if max_records is None else max_records,
            "max_bytes": base.max_bytes if max_bytes is None else max_bytes,
            "max_tokens": base.max_tokens if max_tokens is None else max_tokens,
        }
        if env is not None:
            body["env"] = {name: str(value) for name, value in env.items()}
        return str(_read(self._call("POST", "/experience/block", within=self.search_timeout, json=body), "block"))

    def lessons(
        self, *, scope: Scope, limit: int = 50, offset: int = 0, status: Status | str | None = None
    ) -> list[Lesson]:
        limit, offset = _check.integer(limit, "limit"), _check.integer(offset, "offset")
        params: dict[str, Any] = {**_scope_params(scope), "limit": limit, "offset": offset}
        if status is not None:
            params["status"] = Status.parse(status).value
        found = self._call("GET", "/experience/lessons", params=params)
        return [
            Lesson(_parsed(Experience.from_dict, item), bool(item.get("eligible")), item.get("reason"))
            for item in _read(found, "lessons")
        ]

    def get(self, id: str, *, scope: Scope) -> Experience:
        params, known_id = _scope_params(scope), arguments.lesson_id(id)
        if known_id is None:  # as a local memory answers an id no lesson can have
            raise NotFoundError(f"no lesson {str(id)[:120]!r} in this scope")
        return _parsed(
            Experience.from_dict, self._call("GET", f"/experience/lessons/{_segment(known_id)}", params=params)
        )

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
        store's shortcuts) are accepted for the same signature and not sent."""
        scope, _ = arguments.host_scope(scope), _check.integer(attempts, "attempts", minimum=1)
        if arguments.lesson_id(id) is None:  # as a local memory answers an id no lesson can have
            raise NotFoundError(f"no lesson {str(id)[:120]!r} in this scope")
        body: dict[str, Any] = {"scope": scope.to_dict(), "success": success}
        if key is not None:
            body["key"] = key
        if task is not None:
            body["task"] = task
        return _parsed(
            Experience.from_dict, self._call("POST", f"/experience/lessons/{_segment(id)}/outcome", json=body)
        )

    def set_status(
        self, id: str, status: Status | str, *, scope: Scope, reason: str = "", attempts: int = OUTCOME_ATTEMPTS
    ) -> Experience:
        """``Memory.set_status`` on the service (which retries a lost race itself: ``attempts`` is not sent)."""
        scope, _ = arguments.host_scope(scope), _check.integer(attempts, "attempts", minimum=1)
        if arguments.lesson_id(id) is None:
            raise NotFoundError(f"no lesson {str(id)[:120]!r} in this scope")
        body = {"scope": scope.to_dict(), "status": Status.parse(status).value, "reason": reason}
        return _parsed(
            Experience.from_dict, self._call("POST", f"/experience/lessons/{_segment(id)}/status", json=body)
        )

    def forget(self, id: str, *, scope: Scope) -> bool:
        """``Memory.forget`` on the service: ``DELETE /experience/lessons/{id}``."""
        params, known_id = _scope_params(scope), arguments.lesson_id(id)
        if known_id is None:  # as a local memory answers an id no lesson can have
            return False
        found = self._call("DELETE", f"/experience/lessons/{_segment(known_id)}", params=params)
        deleted = _read(found, "deleted")
        if not isinstance(deleted, bool):
            raise StoreError("the service's answer has no boolean 'deleted': is this URL an afteraction service?")
        return deleted

    def forget_user(self, user: str, *, tenant: str) -> list[str]:
        """``Memory.forget_user`` on the service: ``DELETE /experience/users/{user}/lessons``."""
        tenant, user = check_owner(tenant, user)
        found = self._call("DELETE", f"/experience/users/{_segment(user)}/lessons", params={"tenant": tenant})
        ids = _read(found, "ids")
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


def _segment(id: str) -> str:
    """An id as one path segment, every reserved character escaped (the service then refuses
    what is not a valid id, naming it)."""
    return quote(id, safe="")
