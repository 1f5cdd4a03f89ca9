"""Search results decoded on demand: an Experience whose ranking fields come from columns.

Ranking a search's candidates reads a few fields of each (scope, status, confidence, times, id,
revision) and keeps a handful; parsing and validating each candidate's stored JSON cost more than
the query that found it (about 0.1 ms a record, 60 per hybrid search). So the stores build
their candidates as ``SearchedExperience``: those fields are set from the row's columns, written
with the JSON from the same record; the first read of any other field decodes the JSON (through
the store's ``Decoder``, so an unreadable record is a ``StoreError`` as before) and fills them all.

It is an ``Experience`` in every way a caller can tell (``isinstance``, fields, ``to_dict``,
``==`` and ``hash`` against a decoded Experience of the same values); ``settled`` gives the plain
decoded Experience, which ``Memory.search`` hands out in its hits.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from afteraction.model import Experience, Scope, Status

__all__ = ["COLUMNS", "PG_COLUMNS", "ScopeCache", "SearchedExperience", "searched", "settled"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_COMPARED = tuple(f.name for f in fields(Experience) if f.compare)
#: Set from columns at once; every other field waits for the JSON.
_EAGER = ("id", "scope", "status", "confidence", "created_at", "updated_at", "expires_at", "revision", "kind")
_LAZY = frozenset(f.name for f in fields(Experience)) - set(_EAGER)


class Decode(Protocol):
    """What decodes a record's JSON (``_sql.Decoder``), and knows the ones it decoded lately."""

    def __call__(self, data: str) -> Experience: ...

    def recent(self, data: str) -> Experience | None: ...


class SearchedExperience(Experience):
    """An Experience from a search row, its other fields decoded on first read (see the module)."""

    __slots__ = ("_data", "_decode")

    _data: str
    _decode: Decode

    @classmethod
    def of(
        cls,
        decode: Decode,
        data: str,
        *,
        id: str,
        scope: Scope,
        status: str,
        confidence: float,
        created_at: int,
        updated_at: int | None,
        expires_at: int | None,
        revision: int,
    ) -> SearchedExperience:
        """A record from its columns (times as microseconds since the epoch) and its JSON."""
        made = object.__new__(cls)
        put = object.__setattr__
        put(made, "_data", data)
        put(made, "_decode", decode)
        put(made, "id", id)
        put(made, "scope", scope)
        put(made, "status", Status(status))
        put(made, "confidence", confidence)
        put(made, "created_at", _EPOCH + timedelta(microseconds=created_at))
        put(made, "updated_at", None if updated_at is None else _EPOCH + timedelta(microseconds=updated_at))
        put(made, "expires_at", None if expires_at is None else _EPOCH + timedelta(microseconds=expires_at))
        put(made, "revision", revision)
        put(made, "kind", "experience")
        return made

    def __getattr__(self, name: str) -> Any:
        """Called only for a field not yet set: decode the JSON and set them all."""
        if name not in _LAZY:
            raise AttributeError(name)
        full = self.settled()
        for field_name in _LAZY:
            object.__setattr__(self, field_name, getattr(full, field_name))
        return getattr(full, name)

    def settled(self) -> Experience:
        """The record decoded from its JSON: a plain Experience."""
        try:
            decode, data = self._decode, self._data
        except AttributeError:  # made by dataclasses.replace or unpickled: every field is set
            return Experience(**{f.name: getattr(self, f.name) for f in fields(Experience) if f.init})
        return decode(data)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Experience):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _COMPARED)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, name) for name in _COMPARED))


def settled(experience: Experience) -> Experience:
    """A plain, fully decoded Experience (the record itself unless it is a ``SearchedExperience``)."""
    return experience.settled() if isinstance(experience, SearchedExperience) else experience


#: The columns (on alias ``e``) ``searched`` reads, in its order (SQLite keeps times as microseconds).
COLUMNS = "e.data, e.id, e.tenant, e.app, e.project, e.team, e.agent, e.user, e.status, e.confidence, " + (
    "e.created_at, e.updated_at, e.expires_at, e.revision"
)
#: The same in PostgreSQL, which keeps times as ``timestamptz`` (exact to the microsecond, as the JSON).
_MICROS = "(extract(epoch FROM e.{0}) * 1000000)::bigint"
PG_COLUMNS = 'e.data, e.id, e.tenant, e.app, e.project, e.team, e.agent, e."user", e.status, e.confidence, ' + (
    ", ".join(_MICROS.format(column) for column in ("created_at", "updated_at", "expires_at")) + ", e.revision"
)


def searched(decode: Decode, scopes: ScopeCache, row: tuple[Any, ...]) -> Experience:
    """The record of a row that starts with ``COLUMNS``: the one ``decode`` made of the same JSON
    lately (a repeated search pays nothing for it), else a ``SearchedExperience``."""
    known = decode.recent(row[0])
    if known is not None:
        return known
    data, id, tenant, app, project, team, agent, user, status, confidence, created, updated, expires, revision = row[
        :14
    ]
    return SearchedExperience.of(
        decode,
        data,
        id=id,
        scope=scopes(tenant, app, project, team, agent, user),
        status=status,
        confidence=confidence,
        created_at=created,
        updated_at=updated,
        expires_at=expires,
        revision=revision,
    )


class ScopeCache:
    """Scopes by their column values: a search meets the same few over and over."""

    def __init__(self, size: int = 1_024) -> None:
        self.size = size
        self._known: dict[tuple[Any, ...], Scope] = {}

    def __call__(
        self, tenant: str, app: str, project: str, team: str | None, agent: str | None, user: str | None
    ) -> Scope:
        key = (tenant, app, project, team, agent, user)
        found = self._known.get(key)
        if found is None:
            found = Scope(tenant=tenant, app=app, project=project, team=team, agent=agent, user=user)
            if len(self._known) >= self.size:
                self._known.clear()
            self._known[key] = found
        return found
