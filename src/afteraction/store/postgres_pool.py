"""The PostgreSQL store's connection pool, which notices an outage and says why.

psycopg_pool's own pool waits its ``timeout`` (30 s) for a connection whatever the reason: a busy
pool, or a database that is down, whose connections its workers keep trying to make in the
background while each caller waits the full timeout, to be told only "couldn't get a connection
after 30.00 sec" (the reason went to psycopg's log). ``Pool`` waits in slices of ``SLICE``
seconds; when one ends with no connection, or a connection is found lost (``lost``), it connects
once itself, with a short timeout (a *probe*). When the probe fails the database is *down*: the
caller gets a StoreError at once, with libpq's reason (``postgres_errors.explain``, the password
masked), and so does every call after it, until a probe connects again (one per ``PROBE_EVERY``
seconds at most, whichever call comes). A busy pool still waits its full timeout.

Recovery: the first probe that connects ends the outage, and the pool makes connections again on
demand. Its workers' own attempts to reconnect give up after ``RECONNECT_TIMEOUT`` (psycopg_pool's
default, 5 minutes of attempts twice as far apart each time, could leave a pool with no connection
for a minute after the database was back); a connection given up on is made again when one is asked
for. Nothing in the pool is ever half-written: each operation is its own transaction.
"""

from __future__ import annotations

import threading
from time import monotonic
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from afteraction.errors import StoreError
from afteraction.store.postgres_errors import explain

__all__ = ["PROBE_EVERY", "PROBE_TIMEOUT", "RECONNECT_TIMEOUT", "SLICE", "Pool"]

SLICE = 1.0  # seconds a caller waits for a connection before it asks whether the database is down
PROBE_TIMEOUT = 2  # libpq's connect_timeout for a probe (it counts whole seconds, 2 at least)
PROBE_EVERY = 1.0  # seconds between probes, whoever asks
RECONNECT_TIMEOUT = 10.0  # seconds the pool's workers try to remake a connection before leaving it to demand

Connection = psycopg.Connection[tuple[Any, ...]]


class Pool(ConnectionPool[Connection]):
    """A ``ConnectionPool`` of autocommit connections to ``url`` whose ``getconn`` fails at once,
    naming the cause, while the database cannot be reached (see the module's docstring)."""

    def __init__(
        self, url: str, where: str, *, min_size: int, max_size: int, timeout: float, connect_timeout: int
    ) -> None:
        self._reach_url, self._reach_where = url, where  # ``where``: the URL fit for messages
        self._reach_lock = threading.Lock()  # one probe at a time
        self._reach_down: str | None = None  # why the database cannot be reached, while it cannot
        self._reach_probed = float("-inf")  # when the last probe ended (monotonic)
        super().__init__(
            url,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            kwargs={"autocommit": True, "connect_timeout": connect_timeout},
            reconnect_timeout=RECONNECT_TIMEOUT,
            open=True,
        )

    def getconn(self, timeout: float | None = None) -> Connection:
        """A connection within ``timeout`` (the pool's by default): PoolTimeout after it when the
        pool is busy; StoreError as soon as the database is found down."""
        wait = self.timeout if timeout is None else timeout
        deadline = monotonic() + wait
        while True:
            self.raise_if_down()
            left = deadline - monotonic()
            try:
                return super().getconn(timeout=max(min(left, SLICE), 0.001))
            except PoolTimeout:
                if left <= SLICE:
                    raise PoolTimeout(f"couldn't get a connection after {wait:.2f} sec") from None
            self.probe()

    def lost(self) -> None:
        """A connection was found dead: drop the others that died with it, and probe; StoreError
        naming the cause when the database cannot be reached (else take another connection)."""
        self.check()
        self.probe()
        self.raise_if_down()

    def raise_if_down(self) -> None:
        """StoreError with the cause while the database is down (probing again when the last
        probe is ``PROBE_EVERY`` old)."""
        if self._reach_down is None:
            return
        self.probe()
        down = self._reach_down
        if down is not None:
            raise StoreError(f"the PostgreSQL store at {self._reach_where} cannot be reached: {down}")

    def probe(self) -> None:
        """Connect once (``PROBE_TIMEOUT``) and note whether that worked, unless a probe ended less
        than ``PROBE_EVERY`` ago; a call that finds another probing waits for its answer."""
        with self._reach_lock:
            if monotonic() - self._reach_probed < PROBE_EVERY:
                return
            try:
                with psycopg.connect(self._reach_url, autocommit=True, connect_timeout=PROBE_TIMEOUT):
                    down = None
            except psycopg.Error as exc:
                down = explain(exc, self._reach_url)
            self._reach_down, self._reach_probed = down, monotonic()
