"""Text search in PostgreSQL: the one statement behind ``PostgresStore.search_text``.

A GIN index on a tsvector of the Snowball stems of task (weight A), summary (B) and lesson (C),
with scope and eligibility in the same statement. The score of a row is the sum over the
query's stems it holds of ``ts_rank`` for that stem times the stem's rarity
(``ln(1 + matched / holding)``), counted among the rows the caller may use, so rows of other
scopes never weigh in a score (unlike SQLite's FTS5, whose statistics span the whole index).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from afteraction.model import ELIGIBLE_STATUSES, Scope
from afteraction.store._sql import scope_predicate
from afteraction.store.postgres_schema import TABLE

__all__ = ["search_sql"]

_ELIGIBLE = ", ".join(f"'{status.value}'" for status in sorted(ELIGIBLE_STATUSES, key=lambda s: s.value))
_SEARCH = f"""
    WITH terms AS (
        SELECT i, plainto_tsquery('simple', stem) AS tsq FROM unnest(%s::text[]) WITH ORDINALITY AS u(stem, i)
    ),
    hits AS MATERIALIZED (
        SELECT e.pk, t.i, ts_rank(e.search, t.tsq) AS rank
        FROM {TABLE} AS e JOIN terms AS t ON e.search @@ t.tsq
        WHERE e.search @@ ({{query}}) AND {{scope}}
          AND e.status IN ({_ELIGIBLE}) AND e.confidence >= %s AND (e.expires_at IS NULL OR e.expires_at > %s)
    ),
    rarity AS (
        SELECT i, ln(1 + (SELECT count(DISTINCT pk) FROM hits)::float8 / count(*)) AS idf FROM hits GROUP BY i
    ),
    scores AS (
        SELECT h.pk, sum(r.idf * h.rank) AS score FROM hits AS h JOIN rarity AS r ON r.i = h.i
        GROUP BY h.pk ORDER BY score DESC, h.pk LIMIT %s
    )
    SELECT e.data, s.score, e.task_terms || ' ' || e.summary_terms || ' ' || e.lesson_terms
    FROM scores AS s JOIN {TABLE} AS e ON e.pk = s.pk
    ORDER BY s.score DESC, s.pk
"""


def _column(part: str) -> str:
    return f'e."{part}"'


def search_sql(
    scope: Scope, stems: Sequence[str], now: datetime, limit: int, min_confidence: float
) -> tuple[str, list[Any]]:
    """The statement, and its parameters, giving (data, score, stored stems) of the best
    ``limit`` eligible rows ``scope`` sees."""
    where, params = scope_predicate(scope, "%s", _column)
    query = " || ".join(["plainto_tsquery('simple', %s)"] * len(stems))
    sql = _SEARCH.format(query=query, scope=where)
    return sql, [list(stems), *stems, *params, min_confidence, now, limit]
