"""What API keys cost a request: `afteraction serve --dev` against `afteraction serve` with keys
(and with a key that signs every event), each a real uvicorn process on loopback, driven by one
httpx client over keep-alive, one request at a time.

    .venv/bin/python benchmarks/bench_auth.py            # 2,000 requests per row
    .venv/bin/python benchmarks/bench_auth.py --smoke    # 50, to check it runs

Client and server share this machine, so the numbers are loopback round trips, not capacity.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx

from afteraction.core.canonical import attach_signature, verify
from afteraction.server.auth import KeyAuth
from afteraction.store.keys import ServerSecret, hash_token, mint, open_keys
from afteraction.store.sqlite import SQLiteStore

SECRET = "bench-secret-" + "b" * 40


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def server(db: Path, *, dev: bool) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-c", "from afteraction.cli import main; main()", "serve", "--db", str(db)]
    command += ["--host", "127.0.0.1", "--port", str(port), *(["--dev"] if dev else [])]
    env = {**os.environ, "AFTERACTION_SERVER_SECRET": SECRET}
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(url + "/sessions", timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def event(i: int, prefix: str) -> dict[str, Any]:
    return {
        "specversion": "0.2.0", "id": f"{prefix}{i}", "time": "2026-01-01T10:00:00Z", "source": "agent://bench",
        "type": "tool.called", "session_id": f"s{i % 50}", "trace_id": "t", "payload": {"tool": "search", "n": i},
    }  # fmt: skip


def measure(url: str, headers: dict[str, str], n: int, signer: str | None) -> tuple[float, float, float]:
    """(POST /events per second, POST p50 ms, GET /sessions p50 ms)."""
    bodies = [event(i, "e") if signer is None else attach_signature(event(i, "s"), signer) for i in range(n)]
    with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
        posts: list[float] = []
        started = time.perf_counter()
        for body in bodies:
            t = time.perf_counter()
            answer = http.post("/events", json=body)
            posts.append(time.perf_counter() - t)
            assert answer.status_code == 202, answer.text
        rate = n / (time.perf_counter() - started)
        gets: list[float] = []
        for _ in range(n):
            t = time.perf_counter()
            assert http.get("/sessions", params={"limit": 10}).status_code == 200
            gets.append(time.perf_counter() - t)
    return rate, statistics.median(posts) * 1000, statistics.median(gets) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("-n", type=int, default=2000)
    args = parser.parse_args()
    n = 50 if args.smoke else args.n
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        with server(Path(tmp) / "dev.db", dev=True) as url:
            rows.append(("--dev (no key)", *measure(url, {}, n, None)))
        db = Path(tmp) / "keys.db"
        store = SQLiteStore(db)
        key, token = mint("bench", "read,write", now=datetime.now(timezone.utc))
        open_keys(store).add(key, hash_token(token))
        store.close()
        signing = ServerSecret(SECRET.encode()).signing_secret(key.id)
        with server(db, dev=False) as url:
            auth = {"authorization": f"Bearer {token}"}
            rows.append(("API key", *measure(url, auth, n, None)))
            rows.append(("API key + v2 signature", *measure(url, auth, n, signing)))
        costs = in_process(Path(tmp) / "costs.db", 200 if args.smoke else 5000)
    print(f"{'mode':<24} | {'POST /events/s':>14} | {'POST p50 ms':>11} | {'GET /sessions p50 ms':>20}")
    for name, rate, post_ms, get_ms in rows:
        print(f"{name:<24} | {rate:>14,.0f} | {post_ms:>11.2f} | {get_ms:>20.2f}")
    print()
    print(f"{'in process, per request':<42} | {'p50 µs':>8}")
    for name, micros in costs:
        print(f"{name:<42} | {micros:>8.1f}")


def in_process(db: Path, n: int) -> list[tuple[str, float]]:
    """The parts alone: finding and checking a key among 1,000 (SQLite), and verifying a signature."""
    store = SQLiteStore(db)
    keys = open_keys(store)
    tokens = []
    for _ in range(1000):
        key, token = mint("bench", "read,write", now=datetime.now(timezone.utc))
        keys.add(key, hash_token(token))
        tokens.append(token)
    auth = KeyAuth(keys, ServerSecret(SECRET.encode()))
    found = []
    for i in range(n):
        started = time.perf_counter()
        auth.authenticate("Bearer " + tokens[i % len(tokens)])
        found.append(time.perf_counter() - started)
    signing = auth.secret.signing_secret(key.id)
    signed = attach_signature(event(0, "v"), signing)
    checked = []
    for _ in range(n):
        started = time.perf_counter()
        assert verify(signed, auth.secret.signing_secret(key.id))
        checked.append(time.perf_counter() - started)
    store.close()
    return [
        ("authenticate (lookup + SHA-256 + compare)", statistics.median(found) * 1e6),
        ("derive signing secret + verify v2", statistics.median(checked) * 1e6),
    ]


if __name__ == "__main__":
    main()
