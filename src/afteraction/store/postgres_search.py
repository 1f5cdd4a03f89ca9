"""Text search in PostgreSQL: the one statement behind ``PostgresStore.search_text``, kept in the
database as the function ``afteraction_search_text`` (migration m011, ``postgres_search_schema``,
where its plan is cached for the session: it was planned anew for every search).

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

from afteraction.model import Scope
from afteraction.store.postgres_search_schema import BUDGET, PER_RESULT, SEARCH_TEXT, SEARCH_TEXT_ARGUMENTS

__all__ = ["BUDGET", "PER_RESULT", "search_sql"]

_CALL = f"SELECT * FROM {SEARCH_TEXT}({', '.join(f'%s::{kind}' for _, kind in SEARCH_TEXT_ARGUMENTS)})"


def search_sql(
    scope: Scope, stems: Sequence[str], now: datetime, limit: int, min_confidence: float
) -> tuple[str, list[Any]]:
    """The call, and its parameters, giving (``records.PG_COLUMNS``, score, stored stems) of the best
    ``limit`` eligible rows ``scope`` sees."""
    parts = [scope.tenant, scope.app, scope.project, scope.team, scope.agent, scope.user]
    return _CALL, [*parts, list(stems), now, limit, min_confidence]
