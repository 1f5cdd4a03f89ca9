"""An async-only embedder (a coroutine ``aembed``, no ``embed``) embeds from threads with no event
loop: its coroutine runs on the wrapper's private loop, its output is checked as any embedder's,
and a coroutine past its timeout is cancelled (found by a tester: such an embedder was accepted,
then every embedding failed with "async only: call aembed")."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Callable, Sequence

import pytest

from afteraction.embed import Checked
from afteraction.embed.loop import LoopThread, Overdue
from afteraction.errors import EmbedderError

NAN = float("nan")


class AsyncOnly:
    """Returns ``output`` (default [0, 5] per text) from a coroutine, or raises ``error``; with
    ``hang``, waits until cancelled."""

    model_id = "async-only"
    dimension = 2

    def __init__(self, output: object = None, error: Exception | None = None, hang: bool = False) -> None:
        self.output, self.error, self.hang = output, error, hang
        self.loops: list[asyncio.AbstractEventLoop] = []
        self.cancelled: list[list[str]] = []

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        self.loops.append(asyncio.get_running_loop())
        if self.hang:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.cancelled.append(list(texts))
                raise
        if self.error is not None:
            raise self.error
        if self.output is not None:
            return self.output  # type: ignore[return-value]
        return [[0.0, 5.0] for _ in texts]


def wait_for(condition: Callable[[], object], seconds: float = 2.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_embed_runs_the_coroutine_on_one_private_loop_whatever_the_calling_thread() -> None:
    inner = AsyncOnly()
    embedder = Checked(inner)
    assert embedder.embed(["a", "b"]) == [[0.0, 1.0], [0.0, 1.0]]
    other = threading.Thread(target=lambda: embedder.embed(["c"]))
    other.start()
    other.join(5)
    assert embedder.embed([]) == [] and len(inner.loops) == 2 and inner.loops[0] is inner.loops[1]


def test_embed_works_from_a_thread_that_runs_an_event_loop_itself() -> None:
    """A sync ``Memory.search`` called from async code blocks that loop, but does not deadlock."""
    embedder = Checked(AsyncOnly())

    async def inside() -> list[list[float]]:
        return embedder.embed(["a"])

    assert asyncio.run(inside()) == [[0.0, 1.0]]


@pytest.mark.parametrize(
    ("output", "fault"),
    [
        ([[0.0, 1.0, 2.0]], "vector 0 has length 3, expected 2"),
        ([[NAN, 1.0]], "NaN"),
        ([[0.0, 1.0], [0.0, 1.0]], "returned 2 vectors for 1 texts"),
        ([[0.0, 0.0]], "cannot be scaled"),
        ("not vectors", "not a sequence of numbers"),
    ],
)
def test_its_output_is_checked_as_any_embedders(output: object, fault: str) -> None:
    with pytest.raises(EmbedderError, match=fault):
        Checked(AsyncOnly(output)).embed(["a"])
    with pytest.raises(EmbedderError, match=fault):
        asyncio.run(Checked(AsyncOnly(output)).aembed(["a"]))


def test_an_error_it_raises_is_an_embedder_error_its_own_timeout_no_overdue() -> None:
    with pytest.raises(EmbedderError, match="ConnectionError: refused") as caught:
        Checked(AsyncOnly(error=ConnectionError("refused"))).embed(["a"])
    assert isinstance(caught.value.__cause__, ConnectionError)
    with pytest.raises(EmbedderError, match="TimeoutError") as caught:
        Checked(AsyncOnly(error=TimeoutError())).embed(["a"])
    assert type(caught.value.__cause__) is TimeoutError


def test_a_coroutine_that_hangs_is_cancelled_at_the_timeout() -> None:
    inner = AsyncOnly(hang=True)
    start = time.perf_counter()
    with pytest.raises(EmbedderError, match=r"took over 0\.1 s") as caught:
        Checked(inner).embed(["a"], timeout=0.1)
    assert time.perf_counter() - start < 1.0
    assert isinstance(caught.value.__cause__, Overdue)
    wait_for(lambda: inner.cancelled)
    assert inner.cancelled == [["a"]]


def test_the_loop_thread_ends_when_its_owner_is_collected() -> None:
    loop = LoopThread("afteraction-aembed-test")
    assert loop.run(lambda: asyncio.sleep(0, result=7), timeout=5) == 7
    assert any(thread.name == "afteraction-aembed-test" for thread in threading.enumerate())
    del loop
    gc.collect()
    wait_for(lambda: all(thread.name != "afteraction-aembed-test" for thread in threading.enumerate()))
    assert all(thread.name != "afteraction-aembed-test" for thread in threading.enumerate())
