"""The afteraction HTTP service (the ``server`` extra): an AEP-compatible ingest and session reads.

Every request needs an API key (``server.auth``), unless in development mode (one tenant, ``dev``,
no keys, loopback only). ``create_app`` builds the Starlette app over an event store (``KeyAuth``
turns keys on); ``serve`` runs it under uvicorn.
"""

from __future__ import annotations

from afteraction.errors import ConfigError

try:
    import msgspec  # noqa: F401
    import opentelemetry.proto  # noqa: F401
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised by tests/test_slim.py in a subprocess
    raise ConfigError(
        f"the afteraction server needs the 'server' extra (pip install 'afteraction[server]'): {exc}"
    ) from exc

from afteraction.server.app import DEV_TENANT, Limits, TenantResolver, create_app, is_loopback, serve
from afteraction.server.auth import KeyAuth

__all__ = ["DEV_TENANT", "KeyAuth", "Limits", "TenantResolver", "create_app", "is_loopback", "serve"]
