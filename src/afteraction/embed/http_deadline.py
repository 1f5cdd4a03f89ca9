"""Blocking HTTP reads that stop at a deadline: every socket wait of a request, headers included.

httpx's timeouts are per network operation: an endpoint that sends its answer a byte at a time,
each byte within the read timeout, holds a request for as long as it likes. ``OpenAIEmbedder.embed``
checked its deadline between the body's chunks, but reading the *headers* is one call into
httpcore that loops over reads (until h11's 16 KiB header limit), so headers sent a byte at a time
held a 2 s request for 45 s (h21).

``install(client)`` wraps the network backend of the client's connection pools (the default
transport and any proxy mounts) so that each connect, read and write of a stream waits no longer
than the deadline of the request being made *on this thread* (``deadline(at)``, a context manager),
and fails with httpcore's ``ReadTimeout``/``WriteTimeout``/``ConnectTimeout`` once it has passed;
httpx turns those into its ``TimeoutException``. Outside ``deadline`` (another thread, or the
client used directly) the per-operation timeouts apply as before.

The pools' backend is a private attribute (``_network_backend``) of httpcore's public
``ConnectionPool``/``HTTPProxy``; a pool without it (another httpcore) is left as it is, and
``install`` says how many it wrapped, so a caller can tell.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["deadline", "install"]

_local = threading.local()


@contextlib.contextmanager
def deadline(at: float) -> Iterator[None]:
    """Bound every socket wait on this thread by ``at`` (``time.monotonic()``) until the block ends."""
    before = getattr(_local, "at", None)
    _local.at = at
    try:
        yield
    finally:
        _local.at = before


def _bounded(timeout: float | None, exc: type[Exception]) -> float | None:
    """``timeout`` shortened to the time left before this thread's deadline; ``exc`` once it passed."""
    at: float | None = getattr(_local, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise exc("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream:
    """A network stream whose waits end at the thread's deadline."""

    def __init__(self, stream: Any, httpcore: Any) -> None:
        self._stream = stream
        self._httpcore = httpcore

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self._stream.read(max_bytes, _bounded(timeout, self._httpcore.ReadTimeout))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _bounded(timeout, self._httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        bounded = _bounded(timeout, self._httpcore.ConnectTimeout)
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, bounded), self._httpcore)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend:
    """A network backend whose streams' waits end at the thread's deadline."""

    def __init__(self, backend: Any, httpcore: Any) -> None:
        self._backend = backend
        self._httpcore = httpcore

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, **options: Any) -> _Stream:
        bounded = _bounded(timeout, self._httpcore.ConnectTimeout)
        return _Stream(self._backend.connect_tcp(host, port, bounded, **options), self._httpcore)

    def connect_unix_socket(self, path: str, timeout: float | None = None, **options: Any) -> _Stream:
        bounded = _bounded(timeout, self._httpcore.ConnectTimeout)
        return _Stream(self._backend.connect_unix_socket(path, bounded, **options), self._httpcore)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def install(client: Any) -> int:
    """Wrap the network backend of each of ``client``'s connection pools; how many were wrapped."""
    import httpcore

    transports = [getattr(client, "_transport", None), *getattr(client, "_mounts", {}).values()]
    wrapped = 0
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is None or isinstance(backend, _Backend):
            continue
        pool._network_backend = _Backend(backend, httpcore)  # type: ignore[union-attr]
        wrapped += 1
    return wrapped
