"""PostgresKeys: API keys in the shared PostgreSQL (table ``afteraction_api_keys``).

Row-level security (migration ``m004_keys``) scopes every statement: each transaction sets
``afteraction.tenant`` to the tenant it acts for; finding a key by id to authenticate a request
sets ``afteraction.key_id`` instead, which shows that one row; the operator's list of every
tenant sets ``afteraction.all_tenants`` and can read, not write. The queries carry the tenant
too, so they are tenant-scoped even for a role that bypasses row-level security.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

import psycopg

from afteraction.errors import ConflictError, NotFoundError
from afteraction.store.keys import COLUMNS, Key, key_from_row, key_row
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_schema import KEYS_TABLE

__all__ = ["PostgresKeys"]

_SELECT = f"SELECT {', '.join(COLUMNS)} FROM {KEYS_TABLE}"
_INSERT = (
    f"INSERT INTO {KEYS_TABLE} ({', '.join(COLUMNS)}) VALUES ({', '.join(['%s'] * len(COLUMNS))}) "
    "ON CONFLICT (id) DO NOTHING"
)


class PostgresKeys:
    """The ``KeyStore`` over an open ``PostgresStore`` (whose pool it borrows; the store closes it)."""

    def __init__(self, store: PostgresStore) -> None:
        store.require_service()  # the GRANTs to run when the role lacks the service's tables
        self.store = store

    def _transaction(self, **settings: str) -> AbstractContextManager[psycopg.Cursor[tuple[Any, ...]]]:
        return self.store._settled(*settings.items())

    def add(self, key: Key, token_hash: str) -> None:
        with self._transaction(tenant=key.tenant) as cur:
            cur.execute(_INSERT, key_row(key, token_hash))
            inserted = cur.rowcount
        if inserted != 1:
            raise ConflictError(f"a key with id {key.id!r} exists")

    def find(self, id: str) -> tuple[Key, str] | None:
        with self._transaction(key_id=id) as cur:
            cur.execute(f"{_SELECT} WHERE id = %s", (id,))
            found = cur.fetchone()
        return None if found is None else key_from_row(found)

    def list(self, tenant: str | None = None, *, project: str | None = None) -> list[Key]:
        if tenant is None:
            with self._transaction(all_tenants="on") as cur:
                cur.execute(f"{_SELECT} ORDER BY tenant, created_at, id")
                rows = cur.fetchall()
            return [key_from_row(values)[0] for values in rows]
        sql, params = f"{_SELECT} WHERE tenant = %s", [tenant]
        if project is not None:
            sql += " AND project = %s"
            params.append(project)
        with self._transaction(tenant=tenant) as cur:
            cur.execute(sql + " ORDER BY created_at, id", params)
            rows = cur.fetchall()
        return [key_from_row(values)[0] for values in rows]

    def revoke(self, id: str, *, at: datetime, tenant: str | None = None) -> Key:
        with self._transaction(key_id=id) as cur:
            cur.execute(f"{_SELECT} WHERE id = %s", (id,))
            found = cur.fetchone()
            if found is not None and (tenant is None or found[1] == tenant):
                cur.execute("SELECT set_config('afteraction.tenant', %s, true)", (found[1],))
                cur.execute(
                    f"UPDATE {KEYS_TABLE} SET revoked_at = %s WHERE id = %s AND tenant = %s AND revoked_at IS NULL",
                    (at, id, found[1]),
                )
                cur.execute(f"{_SELECT} WHERE id = %s AND tenant = %s", (id, found[1]))
                found = cur.fetchone()
            else:
                found = None
        if found is None:
            raise NotFoundError(f"no key {id!r}" + ("" if tenant is None else f" in tenant {tenant!r}"))
        return key_from_row(found)[0]
