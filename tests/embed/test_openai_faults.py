"""afteraction.embed.openai against an endpoint that misbehaves: it echoes the key (escaped or
encoded), sends its answer a byte at a time, sends too much, redirects or answers 204.

The server is the standard library's, on loopback, one mode per first path segment.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("httpx", reason="needs the embed-openai extra (httpx)")

from afteraction.embed.openai import OpenAIEmbedder
from afteraction.errors import EmbedderError

KEY = 'sk-live-Zm9vYmFy/YmF6+cXV4"bG9uZ2tleQ=='
DRIP_S = 0.25


def echoed(mode: str, key: str) -> str:
    """The body of a 401 that echoes ``key`` the way ``mode`` says."""
    if mode == "php":  # PHP's json_encode: '/' written as '\/'
        return json.dumps({"error": f"Invalid API key: {key}"}).replace("/", "\\/")
    if mode == "urlencoded":
        return json.dumps({"error": "bad key", "key": urllib.parse.quote(key, safe="")})
    if mode == "slash2f":  # only the slash encoded: no standard form
        return json.dumps({"error": "bad key", "key": key.replace("/", "%2F")})
    if mode == "unicode":
        return '{"error": "bad key ' + "".join(f"\\u{ord(c):04x}" for c in key) + '"}'
    if mode == "partial":  # a run of the key, cut
        return json.dumps({"error": f"key {key[3:15]}... is revoked"})
    if mode == "base64":  # a proxy echoing the credential encoded (h21)
        return f"invalid token {base64.b64encode(key.encode()).decode()}"
    if mode == "basic":  # ... or as Basic credentials, the key not aligned on 3 bytes
        return f"bad credentials {base64.urlsafe_b64encode(('u:' + key).encode()).decode().rstrip('=')}"
    return json.dumps({"error": f"bad key {key}"})  # literal, '"' escaped as '\"'


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *_: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        mode = self.path.strip("/").split("/")[0]
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        if mode.startswith("leak-"):
            self._send(401, echoed(mode[5:], key).encode())
        elif mode == "drip":  # the status, then one byte now and then, no length: runs for seconds
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            end = time.monotonic() + 8
            try:
                while time.monotonic() < end:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(DRIP_S)
            except OSError:
                pass
        elif mode in ("huge", "hugedeclared"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if mode == "hugedeclared":
                self.send_header("Content-Length", str(50 << 20))
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(b'{"data": [{"index": 0, "embedding": [' + b"0.5, " * (1 << 20))
        elif mode == "redirect":
            self._send(307, b"", [("Location", "http://127.0.0.2:1/ok/v1/embeddings")])
        elif mode == "status204":
            self._send(204, b"")
        else:
            self._send(404, b"unknown mode")

    def _send(self, status: int, body: bytes, headers: list[tuple[str, str]] | None = None) -> None:
        self.send_response(status)
        for name, value in headers or []:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def decoded(text: str) -> str:
    """``text`` with JSON escapes and URL encoding undone, and each base64-looking run decoded after it."""
    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    text = urllib.parse.unquote(re.sub(r'\\(["\\/])', r"\1", text))
    runs = []
    for run in re.findall(r"[A-Za-z0-9+/_-]{12,}", text):
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            with contextlib.suppress(ValueError):
                runs.append(decode(run + "=" * (-len(run) % 4)).decode("latin-1"))
    return " ".join([text, *runs])


def runs_of(key: str, size: int = 8) -> set[str]:
    return {key[i : i + size] for i in range(len(key) - size + 1)}


def fault(embedder: OpenAIEmbedder, texts: list[str], *, coroutine: bool = False) -> str:
    with pytest.raises(EmbedderError) as caught:
        if coroutine:
            asyncio.run(embedder.aembed(texts))
        else:
            embedder.embed(texts)
    return str(caught.value)


@pytest.mark.parametrize("mode", ["literal", "php", "urlencoded", "slash2f", "unicode", "partial", "base64", "basic"])
def test_the_key_never_comes_back_in_an_error_however_the_endpoint_escapes_it(base: str, mode: str) -> None:
    embedder = OpenAIEmbedder(base_url=f"{base}/leak-{mode}/v1", model="m", api_key=KEY, dimensions=8)
    for coroutine in (False, True):
        message = fault(embedder, ["x"], coroutine=coroutine)
        assert "HTTP 401 from" in message
        assert not any(run in message or run in decoded(message) for run in runs_of(KEY)), message
        assert "***" in message or "left out: it echoed the key" in message
    embedder.close()


def test_a_redacted_echo_keeps_the_rest_of_the_body(base: str) -> None:
    embedder = OpenAIEmbedder(base_url=f"{base}/leak-php/v1", model="m", api_key=KEY, dimensions=8)
    assert 'Invalid API key: ***"' in fault(embedder, ["x"])


def test_a_request_ends_at_its_deadline_even_while_bytes_keep_coming(base: str) -> None:
    embedder = OpenAIEmbedder(base_url=f"{base}/drip/v1", model="m", dimensions=8, timeout=1)
    for coroutine in (False, True):
        started = time.monotonic()
        message = fault(embedder, ["x"], coroutine=coroutine)
        took = time.monotonic() - started
        assert "within 1 s" in message and 0.9 < took < 1.6, (message, took)


@pytest.mark.parametrize("mode", ["huge", "hugedeclared"])
def test_an_answer_past_its_cap_is_not_read_further(base: str, mode: str) -> None:
    embedder = OpenAIEmbedder(base_url=f"{base}/{mode}/v1", model="m", dimensions=8, timeout=5)
    for coroutine in (False, True):
        message = fault(embedder, ["x"], coroutine=coroutine)
        assert "passed its cap of 1,048,576 bytes" in message, message
    assert embedder.answer_cap(1) == 1 << 20  # the floor: one text of 8 numbers needs far less
    assert embedder.answer_cap(4096) == 4096 * (8 * 32 + 1024)


def test_a_redirect_or_a_204_is_named_by_its_status(base: str) -> None:
    redirect = OpenAIEmbedder(base_url=f"{base}/redirect/v1", model="m", api_key=KEY, dimensions=8)
    message = fault(redirect, ["x"])
    assert f"HTTP 307 from {base}/redirect/v1/embeddings" in message
    assert "Location: http://127.0.0.2:1/ok/v1/embeddings; not followed" in message
    empty = OpenAIEmbedder(base_url=f"{base}/status204/v1", model="m", dimensions=8)
    assert f"HTTP 204 from {base}/status204/v1/embeddings" in fault(empty, ["x"], coroutine=True)


class HeaderDrip(BaseHTTPRequestHandler):
    """Sends its status line and headers a byte at a time, each byte well within any read timeout."""

    def log_message(self, *_: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        head = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-Pad-%d: %s\r\n" % (n, b"y" * 40) for n in range(200))
        with contextlib.suppress(OSError):
            for byte in head:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.02)


def test_headers_sent_a_byte_at_a_time_end_at_the_deadline_too() -> None:
    """h21: ``embed`` read the headers with the per-read timeout (45 s with ``timeout=2``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), HeaderDrip)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        embedder = OpenAIEmbedder(base_url=url, model="m", dimensions=8, timeout=1)
        for coroutine in (False, True):
            started = time.monotonic()
            message = fault(embedder, ["x"], coroutine=coroutine)
            took = time.monotonic() - started
            assert "within 1 s" in message and 0.9 < took < 1.6, (coroutine, message, took)
        embedder.close()
    finally:
        server.shutdown()
        server.server_close()


def test_the_deadline_is_the_calling_threads_own(base: str) -> None:
    """Two threads, one request each: a stalled one does not cut the other short, nor is it cut by it."""
    slow = OpenAIEmbedder(base_url=f"{base}/drip/v1", model="m", dimensions=8, timeout=1.5)
    outcomes: dict[str, float] = {}

    def run(name: str, embedder: OpenAIEmbedder) -> None:
        started = time.monotonic()
        with contextlib.suppress(EmbedderError):
            embedder.embed(["x"])
        outcomes[name] = time.monotonic() - started

    first = threading.Thread(target=run, args=("long", slow))
    first.start()
    time.sleep(0.5)
    short = OpenAIEmbedder(base_url=f"{base}/drip/v1", model="m", dimensions=8, timeout=0.5)
    run("short", short)
    first.join()
    assert 0.4 < outcomes["short"] < 0.9 and 1.4 < outcomes["long"] < 2.1, outcomes
    slow.close()
    short.close()
