"""API keys: the record, the ``KeyStore`` contract, the tokens and the server secret.

A key's token is ``afa_<16 hex>_<43 base64url>``. The first part is the key's **id**: it is
not secret and appears in lists, logs and errors. The rest is 256 random bits. Only the SHA-256
of the whole token is stored, and a presented token is compared with it in constant time; a
fast hash is right here because the token is random (nothing to guess a dictionary for).

A key's **signing secret** (for HMAC-signed AEP events) is derived, never stored:
``HMAC-SHA256(server secret, "afteraction/signing-secret/v1\\0" + key id)`` (one HKDF-Expand
block). So the server can recompute it for every event, a copy of the database alone does not
reveal it, and every replica with the same server secret agrees. Changing the server secret
changes every signing secret (reissue keys then); a key's own secret never changes.

Keys are never deleted, only revoked: a revoked key authenticates nothing.

A key may carry two limits, each a token bucket (``afteraction.server.ratelimit``): ``rate``
requests per second (up to ``burst`` at once), and ``event_rate`` events per second (up to
``event_burst`` at once), which holds a key to an ingest volume however it batches: a request
of N events or spans takes N. ``event_burst`` is then also the most events one request of the
key may carry; by default it is ``DEFAULT_EVENT_BURST`` (the most the server takes in one
request), or a second of ``event_rate`` when that is more, so every request the server would
take fits in a full bucket. ``None`` means unlimited.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from afteraction.errors import ConfigError, ValidationError
from afteraction.model import _check

if TYPE_CHECKING:
    from afteraction.store.base import Store

__all__ = [
    "BOTH_SIGNATURE_FLAGS",
    "COLUMNS",
    "DEFAULT_EVENT_BURST",
    "NO_SECRET",
    "PREFIX",
    "SCOPES",
    "Key",
    "KeyStore",
    "ServerSecret",
    "hash_token",
    "key_from_row",
    "key_id_of",
    "key_row",
    "mint",
    "open_keys",
    "parse_rate",
    "parse_scopes",
    "token_matches",
]

SCOPES = ("read", "write", "admin")
PREFIX = "afa_"
MIN_SECRET_BYTES = 32
MAX_RATE = 1_000_000.0
MAX_BURST = 1_000_000
#: The event burst of a key given an ``event_rate`` alone: the most events or spans the server
#: takes in one request (``Limits.batch_events``, ``otlp.SPANS_PER_REQUEST``; a test keeps them
#: equal), so no batch the server would take is too large for a default bucket.
DEFAULT_EVENT_BURST = 10_000
NO_SECRET = (
    "API keys need a server secret of at least 32 random bytes: set AFTERACTION_SERVER_SECRET or "
    "AFTERACTION_SERVER_SECRET_FILE (or give --secret-file); `afteraction serve --dev` runs without keys"
)
#: Why a key may not both require signatures and take legacy (v1) ones: ``mint``'s and ``keys create``'s rule.
BOTH_SIGNATURE_FLAGS = "a legacy v1 signature covers no payload, so a key that requires signatures takes v2 only"
_TOKEN = re.compile(r"\Aafa_([0-9a-f]{16})_[A-Za-z0-9_-]{43}\Z", re.ASCII)
_ID = re.compile(r"\Aafa_[0-9a-f]{16}\Z", re.ASCII)
_RATE = re.compile(r"\A\s*([0-9]+(?:\.[0-9]+)?)\s*(?:/\s*s(?:ec(?:ond)?)?)?\s*\Z", re.ASCII)


@dataclass(frozen=True, slots=True)
class Key:
    """One API key as stored, without its secret. ``scopes`` are the routes it may use (read,
    write, admin: each named, none implied by another). ``rate`` (requests per second) and
    ``burst`` bound its requests, ``event_rate`` (events per second) and ``event_burst`` the
    events and spans it ingests (see the module); ``None`` means unlimited."""

    id: str
    tenant: str
    scopes: frozenset[str]
    created_at: datetime
    project: str | None = None
    name: str | None = None
    rate: float | None = None
    burst: int | None = None
    event_rate: float | None = None
    event_burst: int | None = None
    legacy_signatures: bool = False
    require_signatures: bool = False
    revoked_at: datetime | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _ID.match(self.id):
            raise ValidationError("id", f"must be a key id like afa_0123456789abcdef, got {_check.echoed(self.id)!r}")
        _check.name(self.tenant, "tenant")
        _check.optional_name(self.project, "project")
        _check.optional_name(self.name, "name")
        object.__setattr__(self, "scopes", parse_scopes(self.scopes))
        _check.aware(self.created_at, "created_at")
        if self.revoked_at is not None:
            _check.aware(self.revoked_at, "revoked_at")
        for flag in ("legacy_signatures", "require_signatures"):
            if not isinstance(getattr(self, flag), bool):
                raise ValidationError(flag, "must be true or false")
        rate, burst = _bucket(self.rate, self.burst, ("rate", "burst", "a rate"), "requests", 1)
        event_rate, event_burst = _bucket(
            self.event_rate, self.event_burst, ("event_rate", "event_burst", "an event_rate"), "events",
            DEFAULT_EVENT_BURST,
        )  # fmt: skip
        for field, value in (
            ("rate", rate),
            ("burst", burst),
            ("event_rate", event_rate),
            ("event_burst", event_burst),
        ):
            object.__setattr__(self, field, value)

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def revoked(self, at: datetime) -> Key:
        return self if self.revoked_at is not None else replace(self, revoked_at=at)

    def to_dict(self) -> dict[str, Any]:
        """The key as JSON; never holds a secret or a hash (there is none on a Key)."""
        return {
            "id": self.id,
            "tenant": self.tenant,
            "project": self.project,
            "name": self.name,
            "scopes": sorted(self.scopes, key=SCOPES.index),
            "rate": self.rate,
            "burst": self.burst,
            "event_rate": self.event_rate,
            "event_burst": self.event_burst,
            "legacy_signatures": self.legacy_signatures,
            "require_signatures": self.require_signatures,
            "created_at": _check.format_time(self.created_at),
            "revoked_at": None if self.revoked_at is None else _check.format_time(self.revoked_at),
        }

    @classmethod
    def from_dict(cls, data: object) -> Key:
        items = _check.mapping(data, "key")
        unknown = sorted(set(items) - set(_FIELDS))
        if unknown:
            raise ValidationError(unknown[0], "is not a field of a key")
        values = dict(items)
        values["created_at"] = _check.parse_time(values.get("created_at"), "created_at")
        values["revoked_at"] = _check.optional_time(values.get("revoked_at"), "revoked_at")
        return cls(**values)


_FIELDS = (*Key.__dataclass_fields__,)


def _bucket(
    rate: object, burst: object, fields: tuple[str, str, str], unit: str, least: int
) -> tuple[float | None, int | None]:
    """A checked (rate, burst) pair, or (None, None) for no limit. ``fields`` names the rate, the
    burst and the rate with its article; the burst defaults to a second of the rate rounded up,
    at least ``least``."""
    rate_field, burst_field, a_rate = fields
    if rate is None:
        if burst is not None:
            raise ValidationError(burst_field, f"needs {a_rate}: give both, or neither for no limit")
        return None, None
    if isinstance(rate, bool) or not isinstance(rate, (int, float)):
        raise ValidationError(rate_field, f"must be a number of {unit} per second, got {type(rate).__name__}")
    if not (math.isfinite(rate) and 0 < rate <= MAX_RATE):
        raise ValidationError(rate_field, f"must be above 0 and at most {MAX_RATE:g} {unit} per second")
    if burst is None:
        return float(rate), max(least, math.ceil(rate))
    if isinstance(burst, bool) or not isinstance(burst, int) or not 1 <= burst <= MAX_BURST:
        raise ValidationError(burst_field, f"must be an integer from 1 to {MAX_BURST}")
    return float(rate), burst


@runtime_checkable
class KeyStore(Protocol):
    """Where keys live: beside the events, in the same database. Every backend passes
    ``tests/store/test_keys.py``."""

    def add(self, key: Key, token_hash: str) -> None:
        """Store a new key with the SHA-256 (hex) of its token; ConflictError if the id exists."""
        ...

    def find(self, id: str) -> tuple[Key, str] | None:
        """The key with this id and its token hash, whatever its tenant (to authenticate a
        request, whose tenant is not known before its key is), or None."""
        ...

    def list(self, tenant: str | None = None, *, project: str | None = None) -> list[Key]:
        """Keys oldest first: a tenant's (and a project's, when given), or every tenant's
        when ``tenant`` is None (the operator's view)."""
        ...

    def revoke(self, id: str, *, at: datetime, tenant: str | None = None) -> Key:
        """Revoke the key (again is a no-op) and return it; NotFoundError when there is no such
        key, or none in ``tenant`` when given."""
        ...


def parse_scopes(value: object, field: str = "scopes") -> frozenset[str]:
    """Scopes from ``"read,write"`` or a list of names; at least one, each known."""
    if isinstance(value, str):
        names: Iterable[object] = [part.strip() for part in value.split(",") if part.strip()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        names = value
    else:
        raise ValidationError(field, f"must be a list of scopes ({', '.join(SCOPES)}), got {type(value).__name__}")
    found: set[str] = set()
    for name in names:
        if name not in SCOPES:
            raise ValidationError(field, f"{_check.echoed(name)!r} is not a scope; use {', '.join(SCOPES)}")
        found.add(str(name))
    if not found:
        raise ValidationError(field, f"must name at least one scope of {', '.join(SCOPES)}")
    return frozenset(found)


def parse_rate(text: str, field: str = "--rate", unit: str = "requests") -> float:
    """Requests (or another ``unit``) per second from ``"10/s"`` or ``"10"`` (fractions allowed: ``"0.5/s"``)."""
    match = _RATE.match(text)
    if not match:
        raise ValidationError(field, f"must be {unit} per second like 10/s or 0.5/s, got {_check.echoed(text)!r}")
    return float(match.group(1))


def mint(
    tenant: str,
    scopes: object,
    *,
    now: datetime,
    project: str | None = None,
    name: str | None = None,
    rate: float | None = None,
    burst: int | None = None,
    event_rate: float | None = None,
    event_burst: int | None = None,
    legacy_signatures: bool = False,
    require_signatures: bool = False,
) -> tuple[Key, str]:
    """A new key and its token (to show once); store ``hash_token(token)`` with it. Refuses
    ``require_signatures`` with ``legacy_signatures`` (``BOTH_SIGNATURE_FLAGS``)."""
    if require_signatures and legacy_signatures:
        raise ValidationError("require_signatures", "cannot go with legacy_signatures: " + BOTH_SIGNATURE_FLAGS)
    key_id = PREFIX + secrets.token_hex(8)
    key = Key(
        id=key_id,
        tenant=tenant,
        scopes=parse_scopes(scopes),
        created_at=now,
        project=project,
        name=name,
        rate=rate,
        burst=burst,
        event_rate=event_rate,
        event_burst=event_burst,
        legacy_signatures=legacy_signatures,
        require_signatures=require_signatures,
    )
    return key, f"{key_id}_{secrets.token_urlsafe(32)}"


def key_id_of(token: str) -> str | None:
    """The id part of a well-formed token, else None."""
    match = _TOKEN.match(token)
    return None if match is None else PREFIX + match.group(1)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_matches(token: str, stored_hash: str) -> bool:
    """Constant-time comparison of a presented token with a stored hash."""
    return hmac.compare_digest(hash_token(token).encode("ascii"), stored_hash.encode("ascii"))


class ServerSecret:
    """The server's root secret: signing secrets and cursor keys are derived from it. Its
    ``repr`` never shows it; it is never logged."""

    __slots__ = ("_value",)

    def __init__(self, value: bytes, where: str = "the server secret") -> None:
        if len(value) < MIN_SECRET_BYTES:
            raise ConfigError(
                f"{where} is {len(value)} bytes; it needs at least {MIN_SECRET_BYTES} random bytes "
                "(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(48))'`)"
            )
        self._value = value

    def __repr__(self) -> str:
        return "ServerSecret(***)"

    @classmethod
    def load(cls, environ: Mapping[str, str], file: str | None = None) -> ServerSecret | None:
        """From ``file`` (else ``AFTERACTION_SERVER_SECRET_FILE``), else ``AFTERACTION_SERVER_SECRET``;
        None when neither is set. The file's surrounding whitespace is ignored."""
        path = file or environ.get("AFTERACTION_SERVER_SECRET_FILE", "").strip() or None
        if path is not None:
            try:
                text = Path(path).read_bytes().strip()
            except OSError as exc:
                raise ConfigError(f"cannot read the server secret file {path}: {exc.strerror}") from None
            return cls(text, f"the server secret file {path}")
        value = environ.get("AFTERACTION_SERVER_SECRET", "").strip()
        return cls(value.encode("utf-8"), "AFTERACTION_SERVER_SECRET") if value else None

    @classmethod
    def require(cls, environ: Mapping[str, str], file: str | None = None) -> ServerSecret:
        """As ``load``, but ConfigError saying how to give one when none is set."""
        found = cls.load(environ, file)
        if found is None:
            raise ConfigError(NO_SECRET)
        return found

    def derive(self, label: str) -> bytes:
        """32 bytes for one purpose, named by ``label``."""
        return hmac.new(self._value, f"afteraction/{label}".encode(), hashlib.sha256).digest()

    def signing_secret(self, key_id: str) -> str:
        """The signing secret of a key, as the text an AEP SDK takes (``hmac_secret``)."""
        digest = self.derive(f"signing-secret/v1\0{key_id}")
        return "afs_" + base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def open_keys(store: Store) -> KeyStore:
    """The key store in the same database as ``store``."""
    from afteraction.store.sqlite import SQLiteStore

    if isinstance(store, SQLiteStore):
        from afteraction.store.sqlite_keys import SQLiteKeys

        return SQLiteKeys(store)
    if type(store).__name__ == "PostgresStore":
        from afteraction.store.postgres_keys import PostgresKeys

        return PostgresKeys(store)  # type: ignore[arg-type]
    raise ConfigError(f"API keys need a database that outlives the process (SQLite or PostgreSQL), not {store!r}")


def key_row(key: Key, token_hash: str) -> tuple[Any, ...]:
    """The column values of a key, in ``COLUMNS`` order (times as the backend stores them)."""
    scopes = ",".join(sorted(key.scopes, key=SCOPES.index))
    return (
        *(key.id, key.tenant, key.project, key.name, scopes, key.rate, key.burst, key.event_rate, key.event_burst),
        *(key.legacy_signatures, key.require_signatures, token_hash, key.created_at, key.revoked_at),
    )


def key_from_row(values: Sequence[Any]) -> tuple[Key, str]:
    """A key and its hash from the columns in ``COLUMNS`` order (times already decoded)."""
    id, tenant, project, name, scopes, rate, burst, event_rate, event_burst = values[:9]
    legacy, required, token_hash, created, revoked = values[9:]
    key = Key(
        id=id,
        tenant=tenant,
        scopes=parse_scopes(scopes),
        created_at=created,
        project=project,
        name=name,
        rate=rate,
        burst=burst,
        event_rate=event_rate,
        event_burst=event_burst,
        legacy_signatures=bool(legacy),
        require_signatures=bool(required),
        revoked_at=revoked,
    )
    return key, str(token_hash)


COLUMNS = (
    *("id", "tenant", "project", "name", "scopes", "rate", "burst", "event_rate", "event_burst"),
    *("legacy_signatures", "require_signatures", "token_hash", "created_at", "revoked_at"),
)
