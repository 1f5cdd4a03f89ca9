"""The PostgreSQL migration of the write path (m007): one short call stores one record.

A ``put`` used to be one simple query (setting the tenant, then ``INSERT … VALUES`` with every
value quoted into the text): the server parsed and planned a 3-4 kB statement each time, and
the client quoted 21 values. ``PUT`` is a function that sets the tenant for its own transaction
and inserts the row, so a ``put`` is one short statement (``SELECT afteraction_put($1, …)``,
parameters bound by the server) in one round trip, the INSERT's plan cached by PL/pgSQL for
the session (measured in ``benchmarks/bench_postgres.py``, docs/postgres.md). The function
runs with the caller's rights (``SECURITY INVOKER``, the default): row-level security checks
the row it inserts as it checks any other, and the stems (``TERMS``) are still kept by m005's
trigger.

It lives apart from ``postgres_schema`` (the tables and the migration runner) only to keep
each file to one concept; ``postgres_schema.MIGRATIONS`` lists it in order with the others.
"""

from __future__ import annotations

import psycopg

__all__ = ["PUT", "PUT_ARGUMENTS", "m007_put_function"]

PUT = "afteraction_put"
#: Its arguments: the stored columns of ``afteraction_experiences``, in ``_sql.COLUMNS`` order.
PUT_ARGUMENTS = (
    *(("tenant", "text"), ("id", "text"), ("app", "text"), ("project", "text"), ("team", "text")),
    *(("agent", "text"), ("user", "text"), ("task_id", "text"), ("task", "text"), ("summary", "text")),
    *(("lesson", "text"), ("status", "text"), ("confidence", "double precision"), ("created_at", "timestamptz")),
    *(("updated_at", "timestamptz"), ("expires_at", "timestamptz"), ("revision", "integer"), ("data", "text")),
    *(("task_terms", "text"), ("summary_terms", "text"), ("lesson_terms", "text")),
)


def m007_put_function(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    """``afteraction_put(…)``: set ``afteraction.tenant`` to the row's tenant for this
    transaction, insert the row unless (tenant, id) is there already; 1 when inserted, else 0.
    Written out in full (not from ``_sql.COLUMNS``): a migration never changes once shipped."""
    arguments = ", ".join(f"p_{name} {kind}" for name, kind in PUT_ARGUMENTS)
    columns = ", ".join(f'"{name}"' if name == "user" else name for name, _ in PUT_ARGUMENTS)
    values = ", ".join(f"p_{name}" for name, _ in PUT_ARGUMENTS)
    cur.execute(
        f"""
        CREATE FUNCTION {PUT}({arguments}) RETURNS integer LANGUAGE plpgsql AS $$
        DECLARE
            inserted integer;
        BEGIN
            PERFORM set_config('afteraction.tenant', p_tenant, true);
            INSERT INTO afteraction_experiences ({columns}) VALUES ({values})
            ON CONFLICT (tenant, id) DO NOTHING;
            GET DIAGNOSTICS inserted = ROW_COUNT;
            RETURN inserted;
        END $$
        """
    )
