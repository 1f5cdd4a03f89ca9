"""A running ``afteraction serve --dev`` and a minimal HTTP/1.1 keep-alive client for the benchmarks.

The client speaks only what the benchmarks need: one request at a time per connection, bodies
with Content-Length, answers with Content-Length (what uvicorn sends for these routes). It
refuses any host but 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Server:
    port: int
    process: subprocess.Popen[bytes]

    @classmethod
    @contextmanager
    def start(cls, db: str | Path, *extra: str) -> Iterator[Server]:
        """``afteraction serve --dev`` on a free loopback port over ``db``, until the block ends."""
        port = free_port()
        command = [sys.executable, "-c", "from afteraction.cli import main; main()", "serve", "--dev"]
        command += ["--host", HOST, "--port", str(port), "--db", str(db), *extra]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while True:
                if process.poll() is not None:
                    error = process.stderr.read().decode() if process.stderr else ""
                    raise SystemExit(f"the server exited with {process.returncode}: {error[-2000:]}")
                try:
                    with socket.create_connection((HOST, port), timeout=1):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit("the server did not listen within 30 s") from None
                    time.sleep(0.1)
            yield cls(port, process)
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stderr:
                process.stderr.close()


class Connection:
    """One keep-alive connection to ``server``."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def __aenter__(self) -> Connection:
        self._reader, self._writer = await asyncio.open_connection(HOST, self.server.port)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._writer is not None:
            self._writer.close()

    async def request(self, method: str, path: str, body: bytes = b"", *, expect: int) -> bytes:
        """The answer's body; SystemExit when its status is not ``expect``."""
        assert self._reader is not None and self._writer is not None
        head = f"{method} {path} HTTP/1.1\r\nhost: {HOST}\r\n"
        if method == "POST":
            head += f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
        self._writer.write(head.encode() + b"\r\n" + body)
        status_line = await self._reader.readuntil(b"\r\n")
        length = 0
        while True:
            line = await self._reader.readuntil(b"\r\n")
            if line == b"\r\n":
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        data = await self._reader.readexactly(length)
        status = int(status_line.split()[1])
        if status != expect:
            raise SystemExit(f"{method} {path}: {status}, expected {expect}: {data[:500]!r}")
        return data
