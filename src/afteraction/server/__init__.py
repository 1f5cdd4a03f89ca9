"""The afteraction HTTP service (the ``server`` extra): an AEP-compatible ingest and session reads.

This first slice runs in development mode only (one tenant, ``dev``, no API keys, loopback only).
``create_app`` builds the Starlette app over an event store; ``serve`` runs it under uvicorn.
"""

from __future__ import annotations

from afteraction.errors import ConfigError

try:
    import msgspec  # noqa: F401
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised by tests/test_slim.py in a subprocess
    raise ConfigError(
        f"the afteraction server needs the 'server' extra (pip install 'afteraction[server]'): {exc}"
    ) from exc

from afteraction.server.app import DEV_TENANT, Limits, TenantResolver, create_app, is_loopback, serve

__all__ = ["DEV_TENANT", "Limits", "TenantResolver", "create_app", "is_loopback", "serve"]
