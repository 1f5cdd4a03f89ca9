"""The privileges the application role needs, checked when a store (or a service part) opens.

A role that lacks one would fail later, on the first write or search that needs it, with
PostgreSQL's "permission denied"; checking at open names every GRANT to run at once. The library's
store and the service's parts (events, API keys, the OTLP span buffer) each check what they use,
so a role for agent hosts alone needs none of the service's tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import psycopg

from afteraction.errors import AppendOnlyError, StoreError
from afteraction.store.postgres_schema import (
    EVENT_COUNTS,
    EVENTS,
    KEYS_TABLE,
    MIGRATIONS_TABLE,
    OTLP_SPANS,
    SESSIONS,
    TABLE,
    TERMS,
    VECTOR_MODELS,
    VECTORS,
)
from afteraction.store.postgres_search_schema import SEARCH_TEXT, SEARCH_TEXT_ARGUMENTS
from afteraction.store.postgres_write_schema import PUT, PUT_ARGUMENTS

__all__ = [
    "EVENT_DELETE_PRIVILEGES",
    "FORGET_PRIVILEGES",
    "FUNCTIONS",
    "LIBRARY_PRIVILEGES",
    "PRIVILEGES",
    "SERVICE_PRIVILEGES",
    "check_privileges",
    "require_delete",
]

#: What the library's store uses (``PostgresStore`` checks these at open) ...
LIBRARY_PRIVILEGES = {
    TABLE: ("SELECT", "INSERT", "UPDATE"),
    TERMS: ("SELECT", "INSERT", "DELETE"),
    MIGRATIONS_TABLE: ("SELECT",),
    VECTORS: ("SELECT", "INSERT", "UPDATE"),
    VECTOR_MODELS: ("SELECT", "INSERT"),
}
#: ... and what the service adds (its event store, API keys and OTLP span buffer check these when
#: they are opened over the store): a role for agent hosts alone needs none of them.
SERVICE_PRIVILEGES = {
    EVENTS: ("SELECT", "INSERT"),
    SESSIONS: ("SELECT", "INSERT", "UPDATE"),
    EVENT_COUNTS: ("SELECT", "INSERT", "UPDATE"),
    KEYS_TABLE: ("SELECT", "INSERT", "UPDATE"),
    OTLP_SPANS: ("SELECT", "INSERT", "DELETE"),
}
#: What forgetting a lesson adds (``Memory.forget``): asked for when a lesson is deleted, not at open, so a role
#: granted before it existed keeps working, and a deployment may keep its lessons append-only.
FORGET_PRIVILEGES = {TABLE: ("DELETE",)}
#: What deleting sessions adds (``EventStore.delete_sessions`` and ``prune``): asked for by them alone, likewise, so a
#: service role granted before retention existed keeps opening, and a deployment may keep its events append-only.
#: Deleting sessions also drops the OTLP buffer's spans of their traces (``store.spans``).
EVENT_DELETE_PRIVILEGES = {
    EVENTS: ("DELETE",),
    SESSIONS: ("DELETE",),
    EVENT_COUNTS: ("DELETE",),
    OTLP_SPANS: ("DELETE",),
}
PRIVILEGES = {**LIBRARY_PRIVILEGES, **SERVICE_PRIVILEGES}
#: And EXECUTE on the functions of the write path and of text search (PUBLIC has it unless an
#: administrator revoked it).
FUNCTIONS = tuple(
    f"{name}({', '.join(kind for _, kind in arguments)})"
    for name, arguments in ((PUT, PUT_ARGUMENTS), (SEARCH_TEXT, SEARCH_TEXT_ARGUMENTS))
)
_HAS = """
    SELECT t.name, t.privilege, has_table_privilege(t.name, t.privilege)
    FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS t (name, privilege, n) ORDER BY t.n
"""
_EXECUTES = """
    SELECT f.name, has_function_privilege(f.name, 'EXECUTE')
    FROM unnest(%s::text[]) WITH ORDINALITY AS f (name, n) ORDER BY f.n
"""


def check_privileges(
    db: psycopg.Connection[tuple[object, ...]],
    where: str,
    tables: Mapping[str, Sequence[str]] = LIBRARY_PRIVILEGES,
    functions: Sequence[str] = FUNCTIONS,
    *,
    who: str = "afteraction",
) -> None:
    """StoreError naming the GRANTs to run when the role lacks a privilege ``who`` uses (one
    statement for the tables, one for the functions)."""
    missing = _missing(db, tables, functions)
    if missing:
        raise StoreError(
            f"{where}: the role lacks privileges {who} needs; as the tables' owner run: {_grants(missing)}"
        )


def require_delete(
    db: psycopg.Connection[tuple[object, ...]], tables: Mapping[str, Sequence[str]], *, what: str, who: str
) -> None:
    """AppendOnlyError naming the GRANTs when the role lacks a privilege of ``tables`` (``FORGET_PRIVILEGES``,
    ``EVENT_DELETE_PRIVILEGES``): this deployment does not delete ``what``, on purpose or not, and trying again
    will not change that. The message holds no database location: the service shows it to the client."""
    missing = _missing(db, tables, ())
    if missing:
        raise AppendOnlyError(
            f"this deployment does not delete {what}: its database role lacks DELETE (an append-only deployment); "
            f"to allow {who}, as the tables' owner run: {_grants(missing)}"
        )


def _missing(
    db: psycopg.Connection[tuple[object, ...]], tables: Mapping[str, Sequence[str]], functions: Sequence[str]
) -> list[tuple[str, str]]:
    """The (table or ``FUNCTION f``, privilege) pairs the role lacks, in the order asked."""
    wanted = [(table, privilege) for table, privileges in tables.items() for privilege in privileges]
    missing: list[tuple[str, str]] = []
    with db.cursor() as cur:
        if wanted:
            cur.execute(_HAS, ([t for t, _ in wanted], [p for _, p in wanted]))
            missing += [(str(t), str(p)) for t, p, has in cur.fetchall() if not has]
        if functions:
            cur.execute(_EXECUTES, (list(functions),))
            missing += [(f"FUNCTION {f}", "EXECUTE") for f, has in cur.fetchall() if not has]
    return missing


def _grants(missing: Sequence[tuple[str, str]]) -> str:
    return "; ".join(
        f"GRANT {', '.join(p for t, p in missing if t == table)} ON {table} TO <this role>"
        for table in dict.fromkeys(t for t, _ in missing)
    )
