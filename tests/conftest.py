"""Shared test set-up: the conformance data's location, no network beyond loopback, and the
throwaway PostgreSQL (``tests/pg.py``) for the tests marked ``postgres``."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests.pg import Cluster

# CI runs each property on the same examples every time (a red run does not land; a property that
# fails only for a fresh random seed is found on a developer's run, which explores anew each time).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parents[1]
# Beside the repository (/work/main -> /work/shared), or further up for a git worktree
# (/work/wt/<name> -> /work/shared): the nearest ancestor that has it.
CONFORMANCE = next(
    (p / "shared" / "conformance" for p in ROOT.parents if (p / "shared" / "conformance").is_dir()),
    ROOT.parent / "shared" / "conformance",
)
GOLDEN = Path(__file__).resolve().parent / "golden"

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0]
        try:
            ok = ipaddress.ip_address(host).is_loopback
        except ValueError:
            ok = host == "localhost"
        if not ok:
            raise RuntimeError(f"tests may not reach the network: connect to {address!r} refused")
    return _real_connect(self, address)


@pytest.fixture(autouse=True, scope="session")
def _no_network() -> Any:
    socket.socket.connect = _loopback_only  # type: ignore[method-assign]
    yield
    socket.socket.connect = _real_connect  # type: ignore[method-assign]


@pytest.fixture(scope="session")
def conformance() -> Path:
    if not CONFORMANCE.is_dir():
        pytest.fail(f"conformance data not found at {CONFORMANCE}: the repository must sit beside shared/")
    return CONFORMANCE


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One PostgreSQL for the whole run. When it cannot start, the postgres tests fail under CI
    (never a silent skip there) and are skipped with the reason elsewhere; deselect them with
    ``-m 'not postgres'``."""
    try:
        running = Cluster()
    except Exception as exc:
        message = f"cannot start the test PostgreSQL: {exc}"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message + " (deselect with -m 'not postgres')")
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> Iterator[str]:
    """A new empty database owned by a role that is not a superuser; dropped afterwards."""
    url = pg_cluster.database()
    yield url
    pg_cluster.drop(url)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print how many postgres tests ran, so a run that skipped them all shows it."""
    counts: dict[str, int] = {}
    for outcome in ("passed", "failed", "error", "skipped", "xfailed", "xpassed"):
        for report in terminalreporter.stats.get(outcome, []):
            if "postgres" in getattr(report, "keywords", {}):
                counts[outcome] = counts.get(outcome, 0) + 1
    terminalreporter.write_line("postgres tests: " + (", ".join(f"{n} {k}" for k, n in counts.items()) or "none ran"))
