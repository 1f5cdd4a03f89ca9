"""Credentials in an ``OpenAIEmbedder``'s ``base_url`` (h28, finding 2): a user and password, a key in the query
string, a key in the path. They reach the endpoint, and nothing else: not the ``model_id`` (stored in every vector
row, printed by ``afteraction db vectors``), not ``repr``, not an error, not the store.

The server is the standard library's, on loopback: it answers ``…/embeddings`` with vectors made from each text's
hash, records what it was sent, and under ``/echo/`` answers 404 echoing the request's path and credentials.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import socket
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

pytest.importorskip("httpx", reason="needs the embed-openai extra (httpx)")

from afteraction import Memory
from afteraction.embed import Checked
from afteraction.embed.openai import OpenAIEmbedder
from afteraction.errors import ConfigError, EmbedderError
from afteraction.model import Scope

PASSWORD = "Pr0xyPassw0rd"
QUERY_KEY = "3f9a1b2c3d4e5f60718293a4b5c6d7e8"
PATH_KEY = "AIzaSyA1x2B3c4D5e6F7g8H9i0JkLmNoPqRsTuV"
OTHERS = {PASSWORD: "An0therPassw0rd", QUERY_KEY: "77aa88bb99cc00dd11ee22ff33aa44bb", PATH_KEY: PATH_KEY[::-1]}
DIMENSION = 8
SCOPE = Scope(tenant="acme", app="ops", project="p1")


def vector(text: str) -> list[float]:
    raw = [byte - 127.5 for byte in hashlib.sha256(text.encode()).digest()[:DIMENSION]]
    norm = math.sqrt(sum(x * x for x in raw))
    return [x / norm for x in raw]


class Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []

    def log_message(self, *_: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        auth = self.headers.get("Authorization", "")
        self.seen.append({"path": self.path, "auth": auth})
        if self.path.startswith("/echo/"):
            self._send(404, f"no route for POST {self.path} (credentials {auth!r})".encode())
        elif self.path.split("?")[0].endswith("/embeddings"):
            data = [{"index": i, "embedding": vector(text)} for i, text in enumerate(body["input"])]
            self._send(200, json.dumps({"data": data}).encode())
        else:
            self._send(404, b"not found")

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def with_credential(kind: str, port: int, secret: str, prefix: str = "") -> str:
    if kind == "userinfo":
        return f"http://gw:{secret}@127.0.0.1:{port}{prefix}/v1"
    if kind == "query":
        return f"http://127.0.0.1:{port}{prefix}/v1?api-key={secret}"
    return f"http://127.0.0.1:{port}{prefix}/key/{secret}/v1"


KINDS = {"userinfo": PASSWORD, "query": QUERY_KEY, "path": PATH_KEY}


def free_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    number: int = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    return number


@pytest.mark.parametrize("kind", KINDS)
def test_the_credential_is_sent_but_never_shown(port: int, kind: str) -> None:
    secret = KINDS[kind]
    Handler.seen.clear()
    with OpenAIEmbedder(base_url=with_credential(kind, port, secret) + "/", model="m", api_key="sk-other") as embedder:
        assert embedder.dimension == DIMENSION  # learnt by the probe, which reached the endpoint
        assert embedder.embed(["hello"]) == [pytest.approx(vector("hello"))]
        shown = [embedder.model_id, repr(embedder), embedder.base_url, embedder.url, repr(Checked(embedder))]
        assert not any(secret in text for text in shown), shown
    sent = Handler.seen[-1]
    if kind == "userinfo":
        assert sent["auth"].startswith("Basic ")  # the URL's user and password, as HTTP Basic auth
    else:  # the query after /embeddings, the path key in the path
        assert secret in sent["path"] and sent["path"].split("?")[0].endswith("/v1/embeddings"), sent


@pytest.mark.parametrize("kind", KINDS)
def test_other_credentials_give_the_same_model_id(port: int, kind: str) -> None:
    """Credentials are not part of the model's identity: rotating them keeps the stored vectors in use."""
    one = OpenAIEmbedder(base_url=with_credential(kind, port, KINDS[kind]), model="m", dimensions=DIMENSION)
    two = OpenAIEmbedder(base_url=with_credential(kind, port, OTHERS[KINDS[kind]]), model="m", dimensions=DIMENSION)
    try:
        assert one.model_id == two.model_id
        assert one.model_id.startswith(f"openai:http://127.0.0.1:{port}/")
    finally:
        one.close()
        two.close()


def test_a_url_without_credentials_keeps_its_model_id(port: int) -> None:
    plain = f"http://127.0.0.1:{port}/ok/v1/"
    with OpenAIEmbedder(base_url=plain, model="m", dimensions=DIMENSION) as embedder:
        assert embedder.model_id == f"openai:http://127.0.0.1:{port}/ok/v1#m@{DIMENSION}"


@pytest.mark.parametrize("kind", KINDS)
def test_the_set_up_error_does_not_show_the_credential(kind: str) -> None:
    """The probe fails (nothing listens): a ConfigError, often a traceback in a host's console."""
    secret = KINDS[kind]
    with pytest.raises(ConfigError, match="cannot learn the dimension") as caught:
        OpenAIEmbedder(base_url=with_credential(kind, free_port(), secret), model="m", timeout=2)
    chain = [caught.value, caught.value.__cause__]
    assert all(exc is not None and secret not in str(exc) for exc in chain), [str(exc) for exc in chain]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("coroutine", [False, True])
def test_an_endpoint_echoing_the_credential_does_not_show_it(port: int, kind: str, coroutine: bool) -> None:
    secret = KINDS[kind]
    embedder = OpenAIEmbedder(base_url=with_credential(kind, port, secret, "/echo"), model="m", dimensions=DIMENSION)
    with pytest.raises(EmbedderError, match="HTTP 404") as caught:
        if coroutine:
            asyncio.run(embedder.aembed(["x"]))
        else:
            embedder.embed(["x"])
    embedder.close()
    message = str(caught.value)
    assert secret not in message and secret[:8] not in message, message


@pytest.mark.parametrize(
    "base_url",
    [f"http://gw:{PASSWORD}@[::1/v1", f"http://gw:{PASSWORD}@127.0.0.1:1/v1\x7f", f"HTTP://gw:{PASSWORD}@h/v1"],
)
def test_a_bad_url_is_refused_without_its_password(base_url: str) -> None:
    with pytest.raises(ConfigError, match="base_url") as caught:
        OpenAIEmbedder(base_url=base_url, model="m", dimensions=DIMENSION)
    assert PASSWORD not in str(caught.value), str(caught.value)


@pytest.mark.parametrize("kind", KINDS)
def test_the_store_never_holds_the_credential(port: int, kind: str, tmp_path: Path) -> None:
    """The model id is written in every vector row and mark, and shown by ``channel_status`` and ``db vectors``."""
    secret = KINDS[kind]
    embedder = OpenAIEmbedder(base_url=with_credential(kind, port, secret), model="text-embedding-3-small")
    mem = Memory.open(tmp_path / "m.db", embedder=Checked(embedder))
    try:
        with mem.run("refund ticket 42 stuck in pending", scope=SCOPE) as run:
            run.tool("refund", args={}, result="ok")
            run.check("refund went through", passed=True)
        assert mem.wait_indexed(10)
        assert mem.search("refund stuck", scope=SCOPE)
        status = mem.channel_status
        assert status.ok and status.model == embedder.model_id, status
    finally:
        mem.close()
        embedder.close()
    with sqlite3.connect(tmp_path / "m.db") as db:
        models = {row[0] for row in db.execute("SELECT DISTINCT model FROM vectors")}
        dump = "\n".join(db.iterdump())
    assert models == {embedder.model_id}
    assert secret not in dump
    for path in tmp_path.rglob("*"):  # the index files beside the database, and their names
        assert secret not in path.name and (path.is_dir() or secret.encode() not in path.read_bytes()), path
