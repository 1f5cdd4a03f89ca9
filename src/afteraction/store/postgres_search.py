"""Text search in PostgreSQL: the one statement behind ``PostgresStore.search_text``.

Row-level security keeps PostgreSQL from using a GIN index on ``search`` for the application
role (``@@`` is not leakproof; see ``postgres_schema.m005``), so the statement finds its rows
through ``TERMS`` (tenant, stem, record), with equalities a btree serves under the policies:

1. For each of the query's stems, how many of the tenant's records hold it, counted up to
   ``BUDGET + 1`` (a short index scan each).
2. The rarest stems choose the candidate records, while their postings fit ``BUDGET`` or are
   fewer than ``PER_RESULT`` per result asked, as the SQLite store narrows its search; when
   every stem fits, every stem chooses and the result is exact. When even the rarest stem is
   held by more than ``BUDGET`` records, it alone chooses. Each chosen stem gives its
   ``BUDGET`` newest records *that the caller may use* (its scope, an eligible status, the
   confidence floor, not expired): those conditions are checked on each posting's record
   before the limit, so rows of other apps, projects or users of the tenant, and ineligible
   rows, never take a scope's places. When the chosen stems give fewer than ``limit`` such
   records, each other stem adds its ``limit`` newest usable records (as SQLite adds rows that
   hold only the commoner terms when the rare ones give too few).
   A candidate's row (its ``search`` column) is read once, by the posting that chose it, not
   again to score it (at 1M lessons, 9.1 → 8.0 ms p50 in the server, the same rows found).
3. Scores on the candidates only (each stem's ``tsquery`` made once, not once per candidate and
   stem: at 1M lessons, 11.4 → 8.8 ms p50 in the server): a row's score is the sum over the
   query's stems it holds of ``ts_rank`` for that stem (task weighted A, summary B, lesson C)
   times the stem's rarity (``ln(1 + matched / holding)``), counted among the candidates, all
   rows the caller may use, so rows of other scopes never weigh in a score (unlike SQLite's
   FTS5).

What is bounded is which rows are considered, not how they score: a row holding only stems
far commoner than the rarest ones is not considered when the rarest ones give ``limit`` rows.
Which stems are rarest is counted over the tenant (cheap: a bounded index scan per stem), and
finding a stem's newest usable records reads its postings, newest first, until enough of them
pass or the postings end: a scope holding few of a common stem's records reads more of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from afteraction.model import ELIGIBLE_STATUSES, Scope
from afteraction.store._sql import scope_predicate
from afteraction.store.postgres_schema import TABLE, TERMS
from afteraction.store.records import PG_COLUMNS

__all__ = ["BUDGET", "PER_RESULT", "search_sql"]

BUDGET = 500  # postings of the chosen stems, beyond the first and the PER_RESULT floor
PER_RESULT = 10
_ELIGIBLE = ", ".join(f"'{status.value}'" for status in sorted(ELIGIBLE_STATUSES, key=lambda s: s.value))
#: The newest records (as many as its last parameter) holding stem ``t.term`` that the caller may
#: use (alias ``c``): scope and eligibility are checked before the limit.
_USABLE = f"""LATERAL (
        SELECT p.pk, e.search FROM {TERMS} AS p JOIN {TABLE} AS e ON e.pk = p.pk
        WHERE p.tenant = %s AND p.term = t.term AND {{scope}}
          AND e.status IN ({_ELIGIBLE}) AND e.confidence >= %s AND (e.expires_at IS NULL OR e.expires_at > %s)
        ORDER BY p.pk DESC LIMIT %s
    ) AS c"""
_SEARCH = f"""
    WITH stems AS (
        SELECT s.term, s.i, (
            SELECT count(*) FROM (SELECT 1 FROM {TERMS} AS p WHERE p.tenant = %s AND p.term = s.term LIMIT %s) AS x
        ) AS n
        FROM unnest(%s::text[]) WITH ORDINALITY AS s (term, i)
    ),
    chosen AS (
        SELECT term FROM (SELECT term, n, sum(n) OVER (ORDER BY n, term) AS running FROM stems WHERE n > 0) AS r
        WHERE running = n OR (n <= %s AND (running <= %s OR running - n < %s))
    ),
    first AS MATERIALIZED (SELECT DISTINCT ON (c.pk) c.pk, c.search FROM chosen AS t, {_USABLE}),
    more AS (
        SELECT c.pk, c.search FROM stems AS t, {_USABLE}
        WHERE t.n > 0 AND t.term NOT IN (SELECT term FROM chosen) AND (SELECT count(*) FROM first) < %s
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
        GROUP BY h.pk ORDER BY score DESC, h.pk LIMIT %s
    )
    SELECT {PG_COLUMNS}, s.score, e.task_terms || ' ' || e.summary_terms || ' ' || e.lesson_terms
    FROM scores AS s JOIN {TABLE} AS e ON e.pk = s.pk
    ORDER BY s.score DESC, s.pk
"""


def _column(part: str) -> str:
    return f'e."{part}"'


def search_sql(
    scope: Scope, stems: Sequence[str], now: datetime, limit: int, min_confidence: float
) -> tuple[str, list[Any]]:
    """The statement, and its parameters, giving (``records.PG_COLUMNS``, score, stored stems) of the best
    ``limit`` eligible rows ``scope`` sees."""
    where, params = scope_predicate(scope, "%s", _column)
    tenant = scope.tenant
    usable = [tenant, *params, min_confidence, now]  # the parameters of one ``_USABLE``, but its limit
    head = [tenant, BUDGET + 1, list(stems), BUDGET, BUDGET, PER_RESULT * limit]
    return _SEARCH.format(scope=where), [*head, *usable, BUDGET, *usable, limit, limit, limit]
