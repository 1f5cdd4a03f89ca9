"""The one error tree of afteraction.

Every error afteraction raises is an ``AfterActionError``. The server and the CLI map
them in one place, by the ``status`` each class carries::

    AfterActionError                 500  base; never raised itself
    ├── ConfigError                  500  misuse at set-up: a bad option, a missing extra, a
    │                                      development identity in production
    ├── ValidationError              400  bad input; names the field and the rule it broke
    ├── AuthError                    401  no or bad credentials
    │   └── ForbiddenError           403  credentials fine, not allowed here
    ├── NotFoundError                404  no such record in the caller's scope
    ├── ConflictError                409  a revision check failed (someone wrote first)
    ├── StoreError                   503  the store failed or is not ours / is corrupted
    │   └── AppendOnlyError          501  the deployment does not delete: its database role may
    │                                      not (names the GRANT); not worth retrying
    └── EmbedderError                503  the embedder failed

Inside a running agent none of these reach the agent: the memory facade reports them
through ``on_error`` and the agent runs without memory.
"""

from __future__ import annotations

__all__ = [
    "AfterActionError",
    "AppendOnlyError",
    "AuthError",
    "ConfigError",
    "ConflictError",
    "EmbedderError",
    "ForbiddenError",
    "NotFoundError",
    "StoreError",
    "ValidationError",
]


class AfterActionError(Exception):
    """Base of every afteraction error."""

    status: int = 500


class ConfigError(AfterActionError):
    """Misuse at set-up time: fix the configuration and start again."""

    status = 500


class ValidationError(AfterActionError, ValueError):
    """Bad input. ``field`` names where (dotted path), ``rule`` what it broke."""

    status = 400

    def __init__(self, field: str, rule: str) -> None:
        self.field = field
        self.rule = rule
        super().__init__(f"{field}: {rule}")


class AuthError(AfterActionError):
    """Missing or invalid credentials."""

    status = 401


class ForbiddenError(AuthError):
    """Valid credentials without the right to do this."""

    status = 403


class NotFoundError(AfterActionError, LookupError):
    """No such record within the caller's scope."""

    status = 404


class ConflictError(AfterActionError):
    """An optimistic-concurrency check failed: the record changed since it was read."""

    status = 409


class StoreError(AfterActionError):
    """The store failed, or the database is not afteraction's or is corrupted."""

    status = 503


class AppendOnlyError(StoreError):
    """A deletion this deployment does not do: its database role lacks DELETE (kept append-only
    on purpose, or granted before deleting existed). The message says so and names the GRANT; it
    holds no database location, so the service shows it to the client as it is."""

    status = 501


class EmbedderError(AfterActionError):
    """The embedder failed or returned vectors that cannot be used."""

    status = 503
