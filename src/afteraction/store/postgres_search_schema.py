"""Migration m011: the text search statement as a function, ``afteraction_search_text(…)``.

The statement (``postgres_search``'s docstring says what it does) was sent whole with each search,
its values quoted into it, so PostgreSQL parsed and planned it every time (``EXPLAIN`` at 1M
lessons: planning 1.1 ms, execution 6 ms). Inside a PL/pgSQL function its plan
is cached for the session, with the values as parameters, as ``afteraction_put``'s INSERT is
(m007); the call is a plain statement, so PgBouncer in transaction mode keeps working, which a
named prepared statement would break. The function runs with the caller's rights
(``SECURITY INVOKER``, the default): row-level security filters what it reads, under the tenant
the caller's transaction set. The scope's optional parts (team, agent, user) are NULL when the
caller has none: ``(e.team IS NULL OR e.team = NULL)`` holds for the rows without one only.

Written out in full (not built from code that may change): a migration never changes once
shipped. A later change to the statement is a new migration that replaces the function.
"""

from __future__ import annotations

import psycopg

__all__ = ["BUDGET", "PER_RESULT", "SEARCH_TEXT", "SEARCH_TEXT_ARGUMENTS", "m011_search_text_function"]

SEARCH_TEXT = "afteraction_search_text"
#: Postings of the chosen stems, beyond the first and the PER_RESULT floor; and that floor: the
#: values m011's function was made with.
BUDGET = 500
PER_RESULT = 10
SEARCH_TEXT_ARGUMENTS = (
    *(("tenant", "text"), ("app", "text"), ("project", "text"), ("team", "text"), ("agent", "text")),
    *(("user", "text"), ("stems", "text[]"), ("now", "timestamptz"), ("limit", "integer")),
    ("min_confidence", "double precision"),
)
#: The rows the function returns: ``records.PG_COLUMNS``, the score and the stored stems.
_RETURNS = """
    r_data text, r_id text, r_tenant text, r_app text, r_project text, r_team text, r_agent text, r_user text,
    r_status text, r_confidence double precision, r_created bigint, r_updated bigint, r_expires bigint,
    r_revision integer, r_score double precision, r_stems text
"""
#: The newest records holding stem ``t.term`` that the caller may use (alias ``c``), as many as
#: ``{limit}``: scope and eligibility are checked before the limit, on each posting's row, looked up
#: by its key. ``OFFSET 0`` keeps that lookup a subquery per posting: as a plain join, the plan cached
#: for the session (generic: it cannot see that the scope's optional parts are NULL) merged the
#: postings with the whole scope's rows in key order, 221,532 rows for 709 postings at 1M lessons,
#: 2.5 s instead of 5 ms, for a role that row-level security does not bind.
_USABLE = """LATERAL (
        SELECT p.pk, e.search FROM afteraction_terms AS p CROSS JOIN LATERAL (
            SELECT e.search FROM afteraction_experiences AS e
            WHERE e.pk = p.pk AND e.tenant = p_tenant AND e.app = p_app AND e.project = p_project
              AND (e.team IS NULL OR e.team = p_team) AND (e.agent IS NULL OR e.agent = p_agent)
              AND (e."user" IS NULL OR e."user" = p_user)
              AND e.status IN ('reinforced', 'validated') AND e.confidence >= p_min_confidence
              AND (e.expires_at IS NULL OR e.expires_at > p_now)
            OFFSET 0
        ) AS e
        WHERE p.tenant = p_tenant AND p.term = t.term
        ORDER BY p.pk DESC LIMIT {limit}
    ) AS c"""
_STATEMENT = f"""
    WITH stems AS (
        SELECT s.term, s.i, (
            SELECT count(*) FROM (
                SELECT 1 FROM afteraction_terms AS p WHERE p.tenant = p_tenant AND p.term = s.term LIMIT {BUDGET + 1}
            ) AS x
        ) AS n
        FROM unnest(p_stems) WITH ORDINALITY AS s (term, i)
    ),
    chosen AS (
        SELECT term FROM (SELECT term, n, sum(n) OVER (ORDER BY n, term) AS running FROM stems WHERE n > 0) AS r
        WHERE running = n OR (n <= {BUDGET} AND (running <= {BUDGET} OR running - n < {PER_RESULT} * p_limit))
    ),
    first AS MATERIALIZED (
        SELECT DISTINCT ON (c.pk) c.pk, c.search FROM chosen AS t, {_USABLE.format(limit=BUDGET)}
    ),
    more AS (
        SELECT c.pk, c.search FROM stems AS t, {_USABLE.format(limit="p_limit")}
        WHERE t.n > 0 AND t.term NOT IN (SELECT term FROM chosen) AND (SELECT count(*) FROM first) < p_limit
    ),
    queries AS MATERIALIZED (SELECT i, plainto_tsquery('simple', term) AS tsq FROM stems WHERE n > 0),
    rows AS MATERIALIZED (  -- each candidate's row was read once, by the posting that chose it
        SELECT DISTINCT ON (pk) pk, search
        FROM (SELECT pk, search FROM first UNION ALL SELECT pk, search FROM more) AS u
    ),
    hits AS MATERIALIZED (
        SELECT r.pk, s.i, ts_rank(r.search, s.tsq) AS rank FROM rows AS r JOIN queries AS s ON r.search @@ s.tsq
    ),
    rarity AS (
        SELECT i, ln(1 + (SELECT count(DISTINCT pk) FROM hits)::float8 / count(*)) AS idf FROM hits GROUP BY i
    ),
    scores AS (
        SELECT h.pk, sum(r.idf * h.rank) AS score FROM hits AS h JOIN rarity AS r ON r.i = h.i
        GROUP BY h.pk ORDER BY score DESC, h.pk LIMIT p_limit
    )
    SELECT e.data, e.id, e.tenant, e.app, e.project, e.team, e.agent, e."user", e.status, e.confidence,
        (extract(epoch FROM e.created_at) * 1000000)::bigint, (extract(epoch FROM e.updated_at) * 1000000)::bigint,
        (extract(epoch FROM e.expires_at) * 1000000)::bigint, e.revision,
        s.score, e.task_terms || ' ' || e.summary_terms || ' ' || e.lesson_terms
    FROM scores AS s JOIN afteraction_experiences AS e ON e.pk = s.pk
    ORDER BY s.score DESC, s.pk
"""


def m011_search_text_function(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    """``afteraction_search_text(tenant, app, project, team, agent, user, stems, now, limit,
    min_confidence)``: the best ``limit`` eligible rows the scope sees for the stems, best first."""
    arguments = ", ".join(f"p_{name} {kind}" for name, kind in SEARCH_TEXT_ARGUMENTS)
    cur.execute(
        f"""
        CREATE FUNCTION {SEARCH_TEXT}({arguments}) RETURNS TABLE ({_RETURNS})
        LANGUAGE plpgsql STABLE AS $$
        BEGIN
            RETURN QUERY {_STATEMENT};
        END $$
        """
    )
