"""Identity: the scope of an invocation comes from the host, never from model output."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from afteraction.errors import ConfigError
from afteraction.model import Scope
from afteraction.settings import is_production

__all__ = ["Identity", "development_identity", "fixed_identity"]

#: A host function that returns the scope of the current invocation.
Identity = Callable[[], Scope]


def fixed_identity(scope: Scope) -> Identity:
    """The same scope for every invocation: a single-tenant host."""
    if not isinstance(scope, Scope):
        raise ConfigError("fixed_identity needs a Scope, e.g. Scope(tenant=..., app=..., project=...)")
    return lambda: scope


def development_identity(
    app: str = "dev", project: str = "dev", *, environ: Mapping[str, str] | None = None
) -> Identity:
    """A ``tenant="dev"`` identity for local work. It refuses to exist when the environment
    says production (``AFTERACTION_ENV``, ``ENVIRONMENT``, ``APP_ENV``, ``ENV``, ...)."""
    if is_production(os.environ if environ is None else environ):
        raise ConfigError(
            "development_identity() refused: the environment says production. "
            "Give the host's real identity function instead."
        )
    scope = Scope(tenant="dev", app=app, project=project)
    return lambda: scope
