"""SQLiteKeys: API keys in the same SQLite file as the lessons and events (table ``api_keys``).

It shares the ``SQLiteStore``'s connections (one writer, readers beside it). Instants are integer
microseconds, as everywhere in the file.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from afteraction.errors import ConflictError, NotFoundError
from afteraction.store.keys import COLUMNS, Key, key_from_row, key_row
from afteraction.store.sqlite import SQLiteStore, micros

__all__ = ["SQLiteKeys"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SELECT = f"SELECT {', '.join(COLUMNS)} FROM api_keys"
_INSERT = (
    f"INSERT INTO api_keys ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))}) ON CONFLICT (id) DO NOTHING"
)


def _instant(value: int | None) -> datetime | None:
    return None if value is None else _EPOCH + timedelta(microseconds=value)


def _decode(values: tuple[Any, ...]) -> tuple[Key, str]:
    return key_from_row((*values[:-2], _instant(values[-2]), _instant(values[-1])))


class SQLiteKeys:
    """The ``KeyStore`` over an open ``SQLiteStore`` (which owns the connection and closes it)."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store

    def add(self, key: Key, token_hash: str) -> None:
        values = list(key_row(key, token_hash))
        values[-2] = micros(key.created_at)
        values[-1] = None if key.revoked_at is None else micros(key.revoked_at)
        with self.store._writing() as db:
            inserted = db.execute(_INSERT, values).rowcount
        if inserted != 1:
            raise ConflictError(f"a key with id {key.id!r} exists")

    def find(self, id: str) -> tuple[Key, str] | None:
        with self.store._reading() as db:
            found = db.execute(f"{_SELECT} WHERE id = ?", (id,)).fetchone()
        return None if found is None else _decode(found)

    def list(self, tenant: str | None = None, *, project: str | None = None) -> list[Key]:
        sql, params = _SELECT, []
        if tenant is not None:
            sql += " WHERE tenant = ?"
            params.append(tenant)
            if project is not None:
                sql += " AND project = ?"
                params.append(project)
        sql += " ORDER BY tenant, created_at, id" if tenant is None else " ORDER BY created_at, id"
        with self.store._reading() as db:
            rows = db.execute(sql, params).fetchall()
        return [_decode(values)[0] for values in rows]

    def revoke(self, id: str, *, at: datetime, tenant: str | None = None) -> Key:
        where = "id = ?" + ("" if tenant is None else " AND tenant = ?")
        params: list[Any] = [id] if tenant is None else [id, tenant]
        with self.store._writing() as db:
            update = f"UPDATE api_keys SET revoked_at = ? WHERE {where} AND revoked_at IS NULL"
            db.execute(update, (micros(at), *params))
            found = db.execute(f"{_SELECT} WHERE {where}", params).fetchone()
        if found is None:
            raise NotFoundError(f"no key {id!r}" + ("" if tenant is None else f" in tenant {tenant!r}"))
        return _decode(found)[0]
