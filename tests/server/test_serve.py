"""`afteraction serve`: refuses to start without a server secret (keys) or, in --dev, off loopback;
and, started for real in a subprocess, takes an event over HTTP and reads it back."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from afteraction.cli import main
from tests.server.test_ingest import event


def test_serve_without_dev_needs_a_server_secret(tmp_path: Path) -> None:
    env = {"AFTERACTION_SERVER_SECRET": None, "AFTERACTION_SERVER_SECRET_FILE": None}
    done = CliRunner(env=env).invoke(main, ["serve", "--db", str(tmp_path / "s.db")])
    assert done.exit_code == 2
    assert "AFTERACTION_SERVER_SECRET" in done.output and "--dev" in done.output
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::"])
def test_dev_mode_refuses_a_non_loopback_host(tmp_path: Path, host: str) -> None:
    done = CliRunner().invoke(main, ["serve", "--dev", "--host", host, "--db", str(tmp_path / "s.db")])
    assert done.exit_code == 2
    assert "loopback" in done.output
    assert not (tmp_path / "s.db").exists()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-c", "from afteraction.cli import main; main()", "serve", "--dev"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--db", str(tmp_path / "served.db")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            if process.poll() is not None:
                output = process.stdout.read().decode() if process.stdout else ""
                pytest.fail(f"the server exited with {process.returncode}: {output[-2000:]}")
            try:
                if httpx.get(f"{url}/sessions", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    pytest.fail("the server did not answer within 20 s")
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout:
            process.stdout.close()


def test_a_real_server_takes_an_event_over_http(server: str) -> None:
    with httpx.Client(base_url=server, timeout=10) as http:
        first = http.post("/events", json=event("real-1"))
        assert first.status_code == 202
        assert first.json() == {"accepted": True, "duplicate": False, "id": "real-1"}
        assert http.post("/events", json=event("real-1")).json()["duplicate"] is True
        assert http.post("/events", content=b"{", headers={"content-type": "application/json"}).status_code == 400
        found = http.get("/sessions/ses-1/events").json()
        assert [e["id"] for e in found["events"]] == ["real-1"]
        assert "server" not in {name.lower() for name in first.headers}
