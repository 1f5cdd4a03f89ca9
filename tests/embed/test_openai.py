"""afteraction.embed.openai against a real OpenAI-compatible server on loopback.

The server (Starlette under uvicorn, in a thread) answers ``/ok/v1/embeddings`` with vectors from
the bundled MiniLM, and other prefixes with the faults a real endpoint can have: an HTTP 500, the
wrong number of vectors, NaN, a body that is not JSON, a slow answer, a key check.
"""

from __future__ import annotations

import asyncio
import json
import math
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("httpx", reason="needs the embed-openai extra (httpx)")
pytest.importorskip("starlette", reason="the test server needs the server extra (starlette)")
uvicorn = pytest.importorskip("uvicorn", reason="the test server needs the server extra (uvicorn)")

from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, PlainTextResponse, Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

from afteraction.embed import Checked, MiniLM  # noqa: E402
from afteraction.embed.openai import OpenAIEmbedder  # noqa: E402
from afteraction.errors import ConfigError, EmbedderError  # noqa: E402

KEY = "sk-test-5f2a9c0e-secret"
SLOW_S = 2.0


def make_app(model: MiniLM, seen: list[dict[str, Any]]) -> Starlette:
    async def embeddings(request: Request) -> Response:
        mode = request.path_params["mode"]
        body = await request.json()
        seen.append({"mode": mode, "body": body, "auth": request.headers.get("authorization")})
        texts = body["input"]
        if mode == "auth" and request.headers.get("authorization") != f"Bearer {KEY}":
            return JSONResponse({"error": {"message": f"bad key {request.headers.get('authorization')}"}}, 401)
        if mode == "500":
            return PlainTextResponse("upstream model crashed", 500)
        if mode == "garbage":
            return PlainTextResponse("<html>gateway says hello</html>", 200)
        if mode == "shape":
            return JSONResponse({"object": "list", "embeddings": []})
        if mode == "slow":
            await asyncio.sleep(SLOW_S)
        vectors = await asyncio.to_thread(model.embed, texts)
        if "dimensions" in body:
            vectors = [v[: body["dimensions"]] for v in vectors]
        if mode == "count":
            vectors = vectors[:-1]
        if mode == "short":
            vectors = [v[:-1] for v in vectors]
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        if mode == "nan":
            data[0]["embedding"][3] = math.nan
        data.reverse()  # indexes, not order, say which text a vector belongs to
        text = json.dumps({"object": "list", "data": data, "model": body["model"]})  # allow_nan: NaN literal
        return Response(text, media_type="application/json")

    return Starlette(routes=[Route("/{mode}/v1/embeddings", embeddings, methods=["POST"])])


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, list[dict[str, Any]], MiniLM]]:
    model = MiniLM()
    seen: list[dict[str, Any]] = []
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(make_app(model, seen), log_level="error", lifespan="off")
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not runner.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert runner.started
    yield f"http://127.0.0.1:{sock.getsockname()[1]}", seen, model
    runner.should_exit = True
    thread.join(timeout=5)


@pytest.fixture(autouse=True)
def _closed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every embedder a test builds is closed after it (no unclosed sockets)."""
    built: list[OpenAIEmbedder] = []
    original = OpenAIEmbedder.__init__

    def init(self: OpenAIEmbedder, **options: Any) -> None:
        original(self, **options)
        built.append(self)

    monkeypatch.setattr(OpenAIEmbedder, "__init__", init)
    yield
    for embedder in built:
        embedder.close()


def url(server: tuple[str, Any, Any], mode: str) -> str:
    return f"{server[0]}/{mode}/v1/"


def gap(a: list[list[float]], b: list[list[float]]) -> float:
    return max(abs(x - y) for u, v in zip(a, b, strict=True) for x, y in zip(u, v, strict=True))


TEXTS = ["deploys were timing out", "the TLS certificate expired", "refund stuck in pending", "", "x" * 50]


def test_vectors_match_the_model_behind_the_endpoint_in_order_and_in_batches(server: Any) -> None:
    base, seen, model = server
    embedder = OpenAIEmbedder(base_url=url(server, "ok"), model="all-minilm", max_batch=2)
    assert embedder.dimension == 384  # learnt from the probe
    assert embedder.model_id == f"openai:{base}/ok/v1#all-minilm"
    seen.clear()
    vectors = embedder.embed(TEXTS)
    assert gap(vectors, model.embed(TEXTS)) <= 1e-5
    assert [len(call["body"]["input"]) for call in seen] == [2, 2, 1]
    assert all(call["body"]["model"] == "all-minilm" and "dimensions" not in call["body"] for call in seen)
    assert gap(asyncio.run(embedder.aembed(TEXTS)), vectors) <= 1e-6
    assert embedder.embed([]) == []
    assert asyncio.run(embedder.aembed([])) == []
    checked = Checked(embedder)
    assert checked.model_id == embedder.model_id
    assert gap(checked.embed(TEXTS[:2]), vectors[:2]) <= 1e-6


def test_dimensions_are_sent_and_named_in_the_model_id(server: Any) -> None:
    _, seen, _ = server
    seen.clear()
    embedder = OpenAIEmbedder(base_url=url(server, "ok"), model="m", dimensions=64)
    assert seen == []  # no probe when the dimension is given
    assert (embedder.dimension, embedder.model_id.endswith("#m@64")) == (64, True)
    (vector,) = embedder.embed(["hello"])
    assert len(vector) == 64 and math.isclose(math.fsum(x * x for x in vector), 1.0, abs_tol=1e-6)
    assert seen[-1]["body"]["dimensions"] == 64


def test_long_texts_are_cut_at_max_chars(server: Any) -> None:
    _, seen, _ = server
    embedder = OpenAIEmbedder(base_url=url(server, "ok"), model="m", dimensions=384, max_chars=10)
    embedder.embed(["a" * 500])
    assert seen[-1]["body"]["input"] == ["a" * 10]


@pytest.mark.parametrize(
    ("mode", "fault"),
    [
        ("500", "HTTP 500 from .*/500/v1/embeddings: upstream model crashed"),
        ("count", "returned 2 vectors for 3 texts"),
        ("short", "vector 0 has length 383, expected 384"),
        ("nan", "vector 0 at index 3 is NaN"),
        ("garbage", "is not JSON: '<html>gateway says hello</html>'"),
        ("shape", "has no 'data' list"),
    ],
)
def test_each_fault_is_an_embedder_error_naming_it(server: Any, mode: str, fault: str) -> None:
    embedder = OpenAIEmbedder(base_url=url(server, mode), model="m", dimensions=384)
    with pytest.raises(EmbedderError, match=fault) as caught:
        embedder.embed(["a", "b", "c"])
    assert embedder.model_id in str(caught.value)
    with pytest.raises(EmbedderError, match=fault):
        asyncio.run(embedder.aembed(["a", "b", "c"]))


def test_a_slow_endpoint_times_out(server: Any) -> None:
    embedder = OpenAIEmbedder(base_url=url(server, "slow"), model="m", dimensions=384, timeout=0.2)
    started = time.monotonic()
    with pytest.raises(EmbedderError, match=r"no answer from .* within 0.2 s"):
        embedder.embed(["a"])
    with pytest.raises(EmbedderError, match=r"within 0\.2 s"):
        asyncio.run(embedder.aembed(["a"]))
    assert time.monotonic() - started < SLOW_S


def test_an_unreachable_host_is_an_embedder_error() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    embedder = OpenAIEmbedder(base_url=f"http://127.0.0.1:{port}/v1", model="m", dimensions=8, timeout=2)
    with pytest.raises(EmbedderError, match="cannot reach"):
        embedder.embed(["a"])
    with pytest.raises(ConfigError, match="cannot learn the dimension"):
        OpenAIEmbedder(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout=2)


def test_the_api_key_is_sent_and_never_shown(server: Any) -> None:
    _, seen, _ = server
    good = OpenAIEmbedder(base_url=url(server, "auth"), model="m", api_key=KEY)
    assert seen[-1]["auth"] == f"Bearer {KEY}"
    assert good.dimension == 384
    assert KEY not in repr(good) and "api_key=***" in repr(good)
    bad = OpenAIEmbedder(base_url=url(server, "auth"), model="m", api_key=KEY + "-old", dimensions=384)
    with pytest.raises(EmbedderError, match="HTTP 401") as caught:
        bad.embed(["a"])  # the server echoes the key it got: it must not reach the message
    assert KEY not in str(caught.value) and "***" in str(caught.value)
    with pytest.raises(ConfigError) as setup:
        OpenAIEmbedder(base_url=url(server, "auth"), model="m", api_key=KEY + "-old")
    assert KEY not in str(setup.value)


@pytest.mark.parametrize(
    ("option", "value"),
    [("base_url", "ftp://x"), ("model", ""), ("dimensions", 0), ("timeout", -1.0), ("max_batch", 0),
     ("max_chars", True), ("api_key", "")],
)  # fmt: skip
def test_bad_options_are_config_errors(option: str, value: object) -> None:
    options: dict[str, Any] = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "dimensions": 8, option: value}
    with pytest.raises(ConfigError, match=option):
        OpenAIEmbedder(**options)
