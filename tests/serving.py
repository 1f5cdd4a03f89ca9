"""A real `afteraction serve` process on a free loopback port, for tests that need one."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import pytest

__all__ = ["free_port", "serving", "started"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving(db: Path, *args: str, probe: str = "/sessions", env: dict[str, str] | None = None) -> Iterator[str]:
    """Start `afteraction serve --db db --host 127.0.0.1 --port <free> *args`; yield its URL once
    ``probe`` answers; stop it (terminate, then kill) on the way out."""
    with started(db, *args, probe=probe, env=env) as (_, url):
        yield url


@contextlib.contextmanager
def started(
    db: Path, *args: str, probe: str = "/sessions", env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``serving``, yielding the process too (for a test that kills it itself)."""
    port = free_port()
    command: Sequence[str] = [sys.executable, "-c", "from afteraction.cli import main; main()", "serve", *args]
    command = [*command, "--host", "127.0.0.1", "--port", str(port), "--db", str(db)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                output = process.stdout.read().decode() if process.stdout else ""
                pytest.fail(f"the server exited with {process.returncode}: {output[-2000:]}")
            try:
                httpx.get(f"{url}{probe}", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    pytest.fail("the server did not answer within 30 s")
                time.sleep(0.1)
        yield process, url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout:
            process.stdout.close()
