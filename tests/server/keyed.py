"""A server with API keys over a fresh SQLite file (or a PostgreSQL database), for the ``test_auth*``
modules: the app, an HTTP client on it (httpx, through Starlette's TestClient), and keys minted
into its store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from afteraction.memory import Memory
from afteraction.server import Limits, create_app
from afteraction.server.auth import KeyAuth
from afteraction.store.events import open_events
from afteraction.store.keys import Key, ServerSecret, hash_token, mint, open_keys
from tests.server.conftest import LIMITS

SECRET_TEXT = "test-server-secret-" + "z" * 40
SECRET = ServerSecret(SECRET_TEXT.encode())


class Keyed:
    """The app, its client, and a way to make keys; with ``experience``, the experience routes too
    (a text-only memory); ``limits`` other than the tests' usual ones."""

    def __init__(self, path: Path | str, *, experience: bool = False, limits: Limits = LIMITS) -> None:
        self.events = open_events(str(path))
        self.store = self.events.store
        self.keys = open_keys(self.store)
        self.auth = KeyAuth(self.keys, SECRET)
        self.memory = Memory(self.store, embedder=None) if experience else None
        app = create_app(self.events, auth=self.auth, limits=limits, cursor_key=SECRET.derive("c"), memory=self.memory)
        self.app = app
        self.client = TestClient(self.app, raise_server_exceptions=False)

    def key(self, tenant: str = "acme", scopes: str = "read,write", **options: Any) -> tuple[Key, str]:
        key, token = mint(tenant, scopes, now=datetime.now(timezone.utc), **options)
        self.keys.add(key, hash_token(token))
        return key, token

    def token(self, tenant: str = "acme", scopes: str = "read,write", **options: Any) -> str:
        return self.key(tenant, scopes, **options)[1]


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@contextmanager
def keyed(path: Path | str, *, experience: bool = False, limits: Limits = LIMITS) -> Iterator[Keyed]:
    """The server over an SQLite file ``path``, or a PostgreSQL database URL."""
    server = Keyed(path, experience=experience, limits=limits)
    try:
        with server.client:
            yield server
    finally:
        if server.memory is not None:
            server.memory.close()
        server.store.close()
