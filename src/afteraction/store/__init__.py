"""Storage: the ``Store`` contract and its backends, and ``open_store`` to pick one by URL.

=========================================  ==============================================
``":memory:"``                             ``MemoryStore`` (nothing survives the process)
``sqlite:///relative.db``                  ``SQLiteStore`` (SQLAlchemy style: three slashes
``sqlite:////absolute.db``                 then the path, so four for an absolute path)
``sqlite:path`` or a plain path            ``SQLiteStore``
``postgresql://user@host/db`` (or          ``PostgresStore`` (the ``postgres`` extra)
``postgres://``)
=========================================  ==============================================
"""

from __future__ import annotations

import re
from typing import Literal

from afteraction.core.redact import redact_url
from afteraction.errors import ConfigError
from afteraction.store.base import Candidate, Store
from afteraction.store.memory import MemoryStore
from afteraction.store.sqlite import SQLiteStore

__all__ = ["Backend", "Candidate", "MemoryStore", "SQLiteStore", "Store", "locate", "open_store", "require_postgres"]

_ACCEPTED = (
    "':memory:', 'sqlite:///relative/path.db', 'sqlite:////absolute/path.db', 'sqlite:path', a file path "
    "or 'postgresql://user@host/database'"
)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


Backend = Literal["memory", "sqlite", "postgresql"]


def locate(url: str) -> tuple[Backend, str]:
    """Which backend a URL names and its target (the SQLite path, or the PostgreSQL URL without
    a SQLAlchemy driver suffix), without opening anything. Raises ConfigError for a URL no backend accepts."""
    if not isinstance(url, str) or not url.strip():
        raise ConfigError(f"store URL {url!r} is empty; use {_ACCEPTED}")
    if url == ":memory:":
        return "memory", url
    scheme_match = _SCHEME.match(url)
    scheme = scheme_match.group(1).lower() if scheme_match else ""
    if len(scheme) == 1:  # a Windows drive letter: C:\\data\\memory.db
        scheme = ""
    if scheme == "sqlite":
        rest = url[len("sqlite:") :]
        path = rest[3:] if rest.startswith("///") else rest
        if rest.startswith("//") and not rest.startswith("///"):
            raise ConfigError(f"store URL {redact_url(url)!r} names a host; use {_ACCEPTED}")
        if not path:
            raise ConfigError(f"store URL {url!r} has no path; use {_ACCEPTED}")
        return "sqlite", path
    if scheme in ("postgresql", "postgres") or scheme.startswith(("postgresql+", "postgres+")):
        return "postgresql", re.sub(r"^(postgres(?:ql)?)\+[a-z0-9]+://", r"\1://", url)  # psycopg's form
    if scheme in ("http", "https"):
        where = redact_url(url)
        raise ConfigError(f"store URL {where!r}: the remote client (for an afteraction server) is not available yet")
    if scheme:
        raise ConfigError(f"store URL {redact_url(url)!r} is not one afteraction can open; use {_ACCEPTED}")
    return "sqlite", url


def open_store(url: str) -> Store:
    """The store a URL names. Raises ConfigError for anything this install cannot open."""
    backend, target = locate(url)
    if backend == "memory":
        return MemoryStore()
    if backend == "sqlite":
        return SQLiteStore(target)
    require_postgres(url)
    from afteraction.store.postgres import PostgresStore

    return PostgresStore(url)


def require_postgres(url: str) -> None:
    """ConfigError naming the ``postgres`` extra when the PostgreSQL driver is not installed."""
    try:
        import afteraction.store.postgres  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"store URL {redact_url(url)!r}: the PostgreSQL backend needs the 'postgres' extra "
            f"(pip install 'afteraction[postgres]'): {exc}"
        ) from exc
