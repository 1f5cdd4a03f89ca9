"""A server with API keys over a fresh SQLite file, for the ``test_auth*`` modules: the app, an
HTTP client on it (httpx, through Starlette's TestClient), and keys minted into its store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from afteraction.server import create_app
from afteraction.server.auth import KeyAuth
from afteraction.store.keys import Key, ServerSecret, hash_token, mint
from afteraction.store.sqlite import SQLiteStore
from afteraction.store.sqlite_events import SQLiteEvents
from afteraction.store.sqlite_keys import SQLiteKeys
from tests.server.conftest import LIMITS

SECRET_TEXT = "test-server-secret-" + "z" * 40
SECRET = ServerSecret(SECRET_TEXT.encode())


class Keyed:
    """The app, its client, and a way to make keys."""

    def __init__(self, path: Path) -> None:
        self.store = SQLiteStore(path)
        self.keys = SQLiteKeys(self.store)
        self.auth = KeyAuth(self.keys, SECRET)
        self.app = create_app(SQLiteEvents(self.store), auth=self.auth, limits=LIMITS, cursor_key=SECRET.derive("c"))
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
def keyed(path: Path) -> Iterator[Keyed]:
    server = Keyed(path)
    try:
        with server.client:
            yield server
    finally:
        server.store.close()
