"""The turns of ``offload`` are shared fairly by tenants, a tenant's waiting bodies are bounded, and the
body of a client that has gone is not worked on.

Before: the two turns were first come, first served for every tenant, so one tenant's queue of
16 MiB bodies held another tenant's 7 KB batch for 6-12 s; a body whose client had closed the
connection was still decoded (7 of 8 after every client had left)."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from starlette.requests import Request
from starlette.testclient import TestClient
from starlette.types import Message

from afteraction.server import ingest, offload
from afteraction.server.common import Problem
from afteraction.server.offload import INLINE_BYTES, in_turn
from tests.server.keyed import bearer, keyed
from tests.server.test_ingest import event

CLIENT_GONE = 499  # offload.CLIENT_GONE: nginx's "client closed request"
JSON = {"content-type": "application/json"}
BIG = {"output": "done " * INLINE_BYTES}  # a payload that takes a body off the loop


def _slow_and_recorded(monkeypatch: pytest.MonkeyPatch, seconds: float) -> list[str]:
    """The ids of the events cleaned, in the order their work started; each takes ``seconds``."""
    started: list[str] = []
    lock = threading.Lock()
    clean = ingest.clean_event

    def slow(found: Any, limits: Any) -> Any:
        with lock:
            started.append(found.id)
        time.sleep(seconds)
        return clean(found, limits)

    monkeypatch.setattr(ingest, "clean_event", slow)
    return started


def _post(client: TestClient, tenant: str, id: str) -> int:
    answer = client.post("/events", json=event(id, payload=BIG), headers={"x-test-tenant": tenant})
    return answer.status_code


def test_another_tenants_body_takes_the_first_turn_that_frees(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _slow_and_recorded(monkeypatch, 0.3)
    with ThreadPoolExecutor(7) as pool:
        hogs = [pool.submit(_post, client, "hog", f"hog-{i}") for i in range(6)]
        deadline = time.monotonic() + 5
        while len(started) < 2 and time.monotonic() < deadline:  # both turns taken, four bodies waiting
            time.sleep(0.01)
        time.sleep(0.1)
        victim = pool.submit(_post, client, "victim", "victim-1")
        assert victim.result() == 202
        assert [hog.result() for hog in hogs] == [202] * 6
    assert started.index("victim-1") == 2, started  # first come, first served made it 6


def test_a_tenant_alone_still_uses_every_turn(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    started = _slow_and_recorded(monkeypatch, 0.2)
    began = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(lambda i: _post(client, "solo", f"solo-{i}"), range(4))) == [202] * 4
    assert len(started) == 4
    assert time.monotonic() - began < 0.2 * 4 - 0.1  # two at a time, not one


def test_a_tenant_with_too_many_bodies_waiting_gets_429_and_others_are_served(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(offload, "WAITING", 2, raising=False)
    started = _slow_and_recorded(monkeypatch, 0.4)
    with ThreadPoolExecutor(6) as pool:
        hogs = [pool.submit(_post, client, "hog", f"hog-{i}") for i in range(4)]  # 2 in work, 2 waiting
        deadline = time.monotonic() + 5
        while len(started) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
        refused = client.post("/events", json=event("hog-9", payload=BIG), headers={"x-test-tenant": "hog"})
        victim = pool.submit(_post, client, "victim", "victim-1")
        assert refused.status_code == 429, refused.text
        assert refused.headers["retry-after"] == "1"
        assert "'hog' already has 2 request bodies waiting" in refused.json()["error"]
        assert victim.result() == 202
        assert [hog.result() for hog in hogs] == [202] * 4
    assert "hog-9" not in started


def _request(gone: list[bool]) -> Request:
    """A request whose client has gone once ``gone[0]`` is true (as uvicorn's ``receive`` says)."""

    async def receive() -> Message:
        if gone[0]:
            return {"type": "http.disconnect"}
        await asyncio.Event().wait()  # nothing more comes: the body was read
        raise AssertionError("unreachable")

    return Request({"type": "http", "method": "POST", "path": "/events", "headers": []}, receive)


def test_the_body_of_a_client_that_has_gone_is_not_worked_on() -> None:
    ran: list[str] = []

    async def main() -> None:
        with pytest.raises(Problem) as refused:
            await in_turn(_request([True]), "acme", ran.append, "gone before")
        assert refused.value.status == CLIENT_GONE
        assert await in_turn(_request([False]), "acme", ran.append, "still there") is None

    asyncio.run(main())
    assert ran == ["still there"]


def test_a_client_that_leaves_while_waiting_is_skipped_when_its_turn_comes() -> None:
    ran: list[str] = []
    release = threading.Event()

    def hold(name: str) -> None:
        release.wait(5)
        ran.append(name)

    async def main() -> None:
        tenants = ["hog", "hog", "other"]  # a tenant takes 2 turns at most, the spare one goes to another
        busy = [asyncio.create_task(in_turn(None, name, hold, f"{name}-{i}")) for i, name in enumerate(tenants)]
        await asyncio.sleep(0.05)  # every turn taken
        gone = [False]
        waiting = asyncio.create_task(in_turn(_request(gone), "acme", ran.append, "left"))
        await asyncio.sleep(0.05)
        gone[0] = True  # the client closes its connection while its body waits
        release.set()
        await asyncio.gather(*busy)
        with pytest.raises(Problem) as refused:
            await waiting
        assert refused.value.status == CLIENT_GONE
        assert await in_turn(None, "acme", ran.append, "next") is None  # its turn was given back

    asyncio.run(main())
    assert sorted(ran) == ["hog-0", "hog-1", "next", "other-2"]


def test_a_freed_turn_goes_to_the_waiting_tenant_holding_the_fewest() -> None:
    order: list[str] = []

    async def main() -> None:
        turns = offload.Turns(size=2, each=2, waiting=8)
        await turns.take("hog")
        await turns.take("hog")

        async def wait(tenant: str) -> None:
            await turns.take(tenant)
            order.append(tenant)

        waiting = [asyncio.create_task(wait(name)) for name in ("hog", "hog", "a", "b", "a")]
        await asyncio.sleep(0)
        for _ in range(5):
            turns.give_back(order[-1] if order else "hog")
            await asyncio.sleep(0)
        await asyncio.gather(*waiting)

    asyncio.run(main())
    assert order == ["a", "b", "a", "hog", "hog"]  # the hog keeps one turn meanwhile


def _decoded_items(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every dict ``ingest.parse_json`` made: decoded events (a count of undecoded items makes none)."""
    made: list[Any] = []
    parse = ingest.parse_json

    def recorded(*args: Any) -> Any:
        found = parse(*args)
        made.extend(item for item in (found if isinstance(found, list) else [found]) if isinstance(item, dict))
        return found

    monkeypatch.setattr(ingest, "parse_json", recorded)
    return made


def test_a_json_array_is_counted_and_charged_before_any_item_is_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _decoded_items(monkeypatch)
    with keyed(tmp_path / "events.db") as server:
        token = server.token(event_rate=1, event_burst=1)
        answer = server.client.post("/events/batch", json=[event("a"), event("b")], headers=bearer(token))
        assert answer.status_code == 413, answer.text
        assert "event_burst of 1" in answer.json()["error"]
        body = b"[" + b"{}," * 5000 + b"{}]"
        over = server.client.post("/events/batch", content=body, headers={**bearer(token), **JSON})
        assert over.status_code == 413, over.text
        assert over.json()["error"] == "the batch holds more than 100 events; the limit is 100"
        assert made == []
        assert server.client.post("/events/batch", json=[event("c")], headers=bearer(token)).status_code == 202
        assert [item["id"] for item in made] == ["c"]
