"""Shared test set-up: the conformance data's location, and no network beyond loopback."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFORMANCE = ROOT.parent / "shared" / "conformance"
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
