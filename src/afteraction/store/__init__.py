"""Storage: the ``Store`` contract and its backends, and ``open_store`` to pick one by URL.

=========================================  ==============================================
``":memory:"``                             ``MemoryStore`` (nothing survives the process)
``sqlite:///relative.db``                  ``SQLiteStore`` (SQLAlchemy style: three slashes
``sqlite:////absolute.db``                 then the path, so four for an absolute path)
``sqlite:path`` or a plain path            ``SQLiteStore``
``postgresql://user@host/db`` (or          ``PostgresStore`` (the ``postgres`` extra)
``postgres://``, ``postgresql+psycopg://``)
=========================================  ==============================================

An afteraction service (``http(s)://``) is not a store: ``Memory.open`` returns a
``RemoteMemory`` (``afteraction.client``) for it.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import unquote

from afteraction.core.redact import redact_url
from afteraction.errors import ConfigError
from afteraction.store.base import Candidate, Store
from afteraction.store.memory import MemoryStore
from afteraction.store.sqlite import SQLiteStore

__all__ = [
    "Backend",
    "Candidate",
    "MemoryStore",
    "SQLiteStore",
    "Store",
    "locate",
    "open_store",
    "pool_options",
    "postgres_url",
    "require_postgres",
]

_ACCEPTED = (
    "':memory:', 'sqlite:///relative/path.db', 'sqlite:////absolute/path.db', 'sqlite:path', a file path "
    "or 'postgresql://user@host/database'"
)
#: A URL's scheme; after a ``+``, SQLAlchemy's driver names may hold ``_`` too (``postgresql+psycopg_async:``).
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*(?:\+[A-Za-z0-9_+.-]*)?):")
#: PostgreSQL's schemes, in any case, with a SQLAlchemy driver suffix or none.
_POSTGRES = re.compile(r"(postgres(?:ql)?)(?:\+[A-Za-z0-9_]+)?:", re.IGNORECASE)


Backend = Literal["memory", "sqlite", "postgresql"]
#: afteraction's own options in a PostgreSQL URL's query (``pool_options``), and what each must be.
POOL_OPTIONS = {"pool_min_size": "integer", "pool_max_size": "integer", "pool_timeout": "number of seconds"}


def postgres_url(url: str) -> str | None:
    """``url`` as libpq reads it when its scheme is PostgreSQL's: the scheme lower-cased (libpq
    refuses ``POSTGRESQL://``) and a SQLAlchemy driver suffix dropped (``postgresql+psycopg://``,
    ``postgresql+psycopg_async://``), the rest unchanged. None for any other URL."""
    found = _POSTGRES.match(url)
    return None if found is None else f"{found[1].lower()}:{url[found.end() :]}"


def locate(url: str) -> tuple[Backend, str]:
    """Which backend a URL names and its target (the SQLite path, or the PostgreSQL URL as libpq
    reads it: ``postgres_url``), without opening anything. Raises ConfigError for a URL no backend accepts."""
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
    target = postgres_url(url)
    if target is not None:
        return "postgresql", target
    if scheme in ("http", "https"):
        where = redact_url(url)
        raise ConfigError(
            f"store URL {where!r} names an afteraction service, not a database: Memory.open({where!r}) "
            "or afteraction.client.RemoteMemory opens a service; this command or store needs a database URL "
            "(an SQLite path, or postgresql://user@host/database)"
        )
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

    return PostgresStore(target)


def require_postgres(url: str) -> None:
    """ConfigError naming the ``postgres`` extra when the PostgreSQL driver is not installed."""
    try:
        import afteraction.store.postgres  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"store URL {redact_url(url)!r}: the PostgreSQL backend needs the 'postgres' extra "
            f"(pip install 'afteraction[postgres]'): {exc}"
        ) from exc


def pool_options(url: str) -> tuple[str, dict[str, float]]:
    """The URL without afteraction's own query options (libpq would refuse them), and those
    options: ``pool_min_size``, ``pool_max_size`` (connections) and ``pool_timeout`` (seconds to
    wait for a free connection). ConfigError for a value that is not a positive number.

    Only those options go: every other byte of the URL stays as it was (a ``+`` is not a space
    to libpq, and the options it reads are its to decode)."""
    base, mark, rest = url.partition("?")
    query, sharp, fragment = rest.partition("#")
    kept, options = [], {}
    for option in query.split("&") if mark else ():
        name, _, value = option.partition("=")
        name = unquote(name)
        if name not in POOL_OPTIONS:
            kept.append(option)
            continue
        value = unquote(value)
        try:
            number = float(value) if name == "pool_timeout" else int(value)
        except ValueError:
            number = 0
        if number <= 0:
            raise ConfigError(f"store URL option {name}={value!r}: must be a positive {POOL_OPTIONS[name]}")
        options[name.removeprefix("pool_")] = float(number)
    if not options:
        return url, options
    return base + ("?" + "&".join(kept) if kept else "") + sharp + fragment, options
