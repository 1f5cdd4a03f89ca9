"""`afteraction serve`: refuses to start without a server secret (keys) or, in --dev, off loopback;
and, started for real in a subprocess, takes an event over HTTP and reads it back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from afteraction.cli import main
from tests.server.test_ingest import event
from tests.serving import free_port, serving

__all__ = ["free_port", "server"]  # used by other server tests


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


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """A real `afteraction serve --dev` in a subprocess, on a free loopback port."""
    with serving(tmp_path / "served.db", "--dev") as url:
        yield url


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
