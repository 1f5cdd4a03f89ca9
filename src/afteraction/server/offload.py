"""Work on a request's body off the event loop, a few bodies at a time.

Decoding and validating a body is CPU work: on the loop, a large one holds up every other
request (16 MiB of JSON ``[{},{},…]`` takes 0.2-0.4 s to decode here and 0.1 s more to free).
In a worker thread it does not, but the threads share the GIL, so two at it go no faster than
one, and each holds what it decoded: up to ~30 times the body's bytes (those 16 MiB become
~0.45 GB of Python objects). So at most ``AT_ONCE`` bodies are worked on at once per event loop
(``in_turn``), and a request over that waits its turn holding only its bytes: forty large
requests at once cost two bodies' worth of objects, not forty. ``off_loop`` does a body of at
most ``INLINE_BYTES`` right on the loop: well under a millisecond, less than the hop to a thread.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

import anyio
import anyio.to_thread

__all__ = ["AT_ONCE", "INLINE_BYTES", "in_turn", "off_loop"]

T = TypeVar("T")

INLINE_BYTES = 4096  # a body up to this size is worked on right on the event loop
AT_ONCE = 2  # bodies worked on at once in worker threads, per event loop

_turns: WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = WeakKeyDictionary()


async def in_turn(work: Callable[..., T], *args: Any) -> T:
    """``work(*args)`` in a worker thread, at most ``AT_ONCE`` at a time on this event loop."""
    loop = asyncio.get_running_loop()
    limiter = _turns.get(loop)
    if limiter is None:
        limiter = _turns[loop] = anyio.CapacityLimiter(AT_ONCE)
    return await anyio.to_thread.run_sync(functools.partial(work, *args), limiter=limiter)


async def off_loop(body: bytes, work: Callable[..., T], *args: Any) -> T:
    """``work(*args, body)``: in turn in a worker thread when ``body`` is large, else right here."""
    if len(body) > INLINE_BYTES:
        return await in_turn(work, *args, body)
    return work(*args, body)
