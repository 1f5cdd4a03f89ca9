"""Settings, declared once as data. The CLI, the server, the docs and validation read this
table; only the edges (CLI, server, ``Memory.open()`` with no URL) read the environment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["DEFAULT_DATABASE", "SETTINGS", "Setting", "api_key", "database_url", "is_production"]

DEFAULT_DATABASE = ".afteraction/memory.db"


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    env: str
    default: str
    help: str


SETTINGS = (
    Setting(
        "database_url",
        "AFTERACTION_DATABASE_URL",
        DEFAULT_DATABASE,
        "Where lessons are stored: an SQLite file path (the default), ':memory:', 'postgresql://…', "
        "or an afteraction service 'http(s)://host:port'.",
    ),
    Setting(
        "api_key",
        "AFTERACTION_API_KEY",
        "",
        "The API key a remote Memory (an http(s):// database URL) sends to the service.",
    ),
    Setting(
        "cache_dir",
        "AFTERACTION_CACHE_DIR",
        "~/.cache/afteraction",
        "Where derived files are kept (the re-quantized embedding model, built once from the bundled one).",
    ),
    Setting(
        "env",
        "AFTERACTION_ENV",
        "development",
        "The deployment environment. 'production' makes development identities refuse to run.",
    ),
    Setting(
        "server_secret",
        "AFTERACTION_SERVER_SECRET",
        "",
        "The server's root secret (at least 32 random bytes): API keys' signing secrets and page cursors "
        "derive from it. Required by `serve` without --dev and by `keys create`. Never logged.",
    ),
    Setting(
        "server_secret_file",
        "AFTERACTION_SERVER_SECRET_FILE",
        "",
        "A file holding the server secret; it takes precedence over AFTERACTION_SERVER_SECRET.",
    ),
)


def database_url(environ: Mapping[str, str]) -> str:
    """The database from ``AFTERACTION_DATABASE_URL``, else the embedded default file."""
    return environ.get("AFTERACTION_DATABASE_URL", "").strip() or DEFAULT_DATABASE


def api_key(environ: Mapping[str, str]) -> str | None:
    """The remote client's API key from ``AFTERACTION_API_KEY``, else None."""
    return environ.get("AFTERACTION_API_KEY", "").strip() or None


_ENV_NAMES = ("AFTERACTION_ENV", "ENVIRONMENT", "APP_ENV", "ENV", "PYTHON_ENV", "NODE_ENV", "DEPLOYMENT_ENVIRONMENT")


def is_production(environ: Mapping[str, str]) -> bool:
    """True when any of the usual variables says production."""
    return any(environ.get(name, "").strip().lower() in ("production", "prod") for name in _ENV_NAMES)
