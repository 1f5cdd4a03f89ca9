"""Work on a request's body off the event loop, a few bodies at a time, the turns shared fairly by tenants.

Decoding and validating a body is CPU work: on the loop, a large one holds up every other
request (16 MiB of JSON ``[{},{},…]`` takes 0.2-0.4 s to decode here and 0.1 s more to free).
In a worker thread it does not, but the threads share the GIL, so two at it go no faster than
one, and each holds what it decoded: up to ~30 times the body's bytes (those 16 MiB become
~0.45 GB of Python objects). So at most ``AT_ONCE`` bodies of one tenant are worked on at once
per event loop (``in_turn``), ``AT_ONCE + SPARE`` of all tenants, and a request over that waits its
turn holding only its bytes: forty large requests at once cost two or three bodies' worth of
objects, not forty. ``off_loop`` does a body of at most ``INLINE_BYTES`` right on the loop: an ordinary
event in ~0.1 ms, less than the hop to a thread (0.3-0.4 ms); a 4 KiB body made to be slow to scrub in
up to ~5 ms (docs/server.md).

The turns are not first come, first served across tenants, or one tenant's large bodies would
hold up every other tenant's ingest. Each tenant waits in a queue of its own; a freed turn goes to
the waiting tenant that holds the fewest turns (the one served longest ago among equals), and the
``SPARE`` turn no tenant's own ``AT_ONCE`` reaches is there for the others: a body of another
tenant starts at once, however many bodies the first one has queued. A tenant may have at most
``WAITING`` bodies waiting: one more is refused at once with 429 and ``Retry-After`` (it would only
wait). A request whose client has gone (``Request.is_disconnected``, checked before it waits and
again when its turn comes) is not worked on: nobody would read the answer (499, as proxies log it).
What a refused body decoded is freed in its worker thread (the frames of its exception cleared
there), not on the loop where the exception lands: 16 MiB of ``[{},{},…]`` took 0.1-0.4 s to free.
"""

from __future__ import annotations

import asyncio
import traceback
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

import anyio
import anyio.to_thread
from starlette.requests import Request

from afteraction.server.common import Problem

__all__ = ["AT_ONCE", "CLIENT_GONE", "INLINE_BYTES", "SPARE", "WAITING", "Turns", "in_turn", "off_loop"]

T = TypeVar("T")

INLINE_BYTES = 4096  # a body up to this size is worked on right on the event loop
AT_ONCE = 2  # bodies of one tenant worked on at once in worker threads, per event loop
SPARE = 1  # turns more than AT_ONCE in all: one tenant never holds them all
WAITING = 16  # bodies of one tenant waiting for a turn, per event loop; one more is 429
CLIENT_GONE = 499  # the status of a request whose client closed the connection before its turn


class Turns:
    """``size`` turns shared by tenants, at most ``each`` held by one: ``take`` waits for one (fairly,
    see the module), ``give_back`` returns it. Used from one event loop only."""

    def __init__(self, size: int = AT_ONCE + SPARE, each: int = AT_ONCE, waiting: int = WAITING) -> None:
        self.size = size
        self.each = each
        self.waiting = waiting
        self.held: dict[str, int] = {}  # tenant -> turns it holds
        self.queues: dict[str, deque[asyncio.Future[None]]] = {}  # in turn order: a served tenant goes last
        self.threads = anyio.CapacityLimiter(size)  # its own threads: a turn never waits for the shared pool

    async def take(self, tenant: str) -> None:
        """A turn for ``tenant``, once it is its turn; Problem(429) when it already has ``waiting`` bodies waiting."""
        queue = self.queues.get(tenant)
        if queue is not None and len(queue) >= self.waiting:
            raise Problem(
                429,
                None,
                f"tenant {tenant!r} already has {self.waiting} request bodies waiting to be worked on "
                "on this server; retry in 1 s",
                {"Retry-After": "1"},
            )
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.queues.setdefault(tenant, deque()).append(turn)
        self._serve()
        try:
            await turn  # at once when _serve gave it
        except BaseException:  # cancelled: a turn given meanwhile goes back, a wait leaves its queue
            if turn.done() and not turn.cancelled():
                self.give_back(tenant)
            else:
                self._leave(tenant, turn)
            raise

    @property
    def free(self) -> int:
        """Turns no tenant holds."""
        return self.size - sum(self.held.values())

    def give_back(self, tenant: str) -> None:
        left = self.held[tenant] - 1
        if left:
            self.held[tenant] = left
        else:
            del self.held[tenant]
        self._serve()

    def _leave(self, tenant: str, turn: asyncio.Future[None]) -> None:
        queue = self.queues.get(tenant)
        if queue is not None and turn in queue:
            queue.remove(turn)
            if not queue:
                del self.queues[tenant]

    def _serve(self) -> None:
        """Give the free turns to the waiting tenants holding the fewest (``min`` keeps the first of equals)."""
        while self.free:
            ready = [name for name in self.queues if self.held.get(name, 0) < self.each]
            if not ready:
                return
            tenant = min(ready, key=lambda name: self.held.get(name, 0))
            queue = self.queues.pop(tenant)
            turn = queue.popleft()
            if queue:
                self.queues[tenant] = queue  # to the back: the other tenants come first next time
            if not turn.done():
                self.held[tenant] = self.held.get(tenant, 0) + 1
                turn.set_result(None)


_turns: WeakKeyDictionary[asyncio.AbstractEventLoop, Turns] = WeakKeyDictionary()


def _run(work: Callable[..., T], *args: Any) -> T:
    """``work(*args)``; an exception leaves with its frames' locals freed here, in the worker thread."""
    try:
        return work(*args)
    except BaseException as exc:
        seen: BaseException | None = exc
        while seen is not None:  # the exception and those it was raised during or from
            traceback.clear_frames(seen.__traceback__)
            seen = seen.__cause__ or seen.__context__
        raise


def _gone() -> Problem:
    return Problem(CLIENT_GONE, None, "the client closed the connection before its body was worked on")


async def in_turn(request: Request | None, tenant: str, work: Callable[..., T], *args: Any) -> T:
    """``work(*args)`` in a worker thread, in ``tenant``'s turn (at most ``AT_ONCE`` of a tenant at a
    time on this event loop, ``AT_ONCE + SPARE`` in all); Problem(499) instead when ``request``'s
    client has gone, Problem(429) when the tenant has too many bodies waiting."""
    loop = asyncio.get_running_loop()
    turns = _turns.get(loop)
    if turns is None:
        turns = _turns[loop] = Turns(AT_ONCE + SPARE, AT_ONCE, WAITING)
    if request is not None and await request.is_disconnected():
        raise _gone()
    await turns.take(tenant)
    try:
        if request is not None and await request.is_disconnected():
            raise _gone()
        return await anyio.to_thread.run_sync(_run, work, *args, limiter=turns.threads)
    finally:
        turns.give_back(tenant)


async def off_loop(request: Request | None, tenant: str, body: bytes, work: Callable[..., T], *args: Any) -> T:
    """``work(*args, body)``: in ``tenant``'s turn in a worker thread when ``body`` is large, else right here."""
    if len(body) > INLINE_BYTES:
        return await in_turn(request, tenant, work, *args, body)
    return work(*args, body)
