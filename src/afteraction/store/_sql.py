"""What the SQL backends share: a record's column values and the scope predicate.

Each backend passes its own placeholder, column quoting and time encoding; the columns and
the visibility rule (``Scope.sees``) are the same everywhere.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from afteraction.core.text import searchable, stemmed
from afteraction.errors import StoreError
from afteraction.model import Experience, Scope, Status

__all__ = ["COLUMNS", "Decoder", "lessons_query", "record_values", "scope_predicate"]

#: The stored columns, in the order ``record_values`` gives them.
COLUMNS = (
    *("tenant", "id", "app", "project", "team", "agent", "user", "task_id", "task", "summary", "lesson", "status"),
    *("confidence", "created_at", "updated_at", "expires_at", "revision", "data"),
    *("task_terms", "summary_terms", "lesson_terms"),
)


def record_values(experience: Experience, when: Callable[[datetime], Any]) -> tuple[Any, ...]:
    """The column values of one record, in ``COLUMNS`` order; ``when`` encodes an instant."""
    exp, scope = experience, experience.scope
    data = json.dumps(exp.to_dict(), ensure_ascii=False, separators=(",", ":"))
    return (
        *(scope.tenant, exp.id, scope.app, scope.project, scope.team, scope.agent, scope.user),
        *(exp.task_id, exp.task, exp.summary, exp.lesson, exp.status.value, exp.confidence),
        when(exp.created_at),
        *(None if t is None else when(t) for t in (exp.updated_at, exp.expires_at)),
        *(exp.revision, data, *map(stemmed, searchable(exp))),
    )


def scope_predicate(scope: Scope, mark: str, column: Callable[[str], str]) -> tuple[str, list[Any]]:
    """The SQL predicate for the rows ``scope`` sees (``Scope.sees``), and its parameters:
    required parts equal; each optional part unset, or equal to the caller's when it has one."""
    clauses = [f"{column(part)} = {mark}" for part in Scope.REQUIRED]
    params: list[Any] = [getattr(scope, part) for part in Scope.REQUIRED]
    for part in Scope.OPTIONAL:
        value = getattr(scope, part)
        if value is None:
            clauses.append(f"{column(part)} IS NULL")
        else:
            clauses.append(f"({column(part)} IS NULL OR {column(part)} = {mark})")
            params.append(value)
    return " AND ".join(clauses), params


class Decoder:
    """Parses stored record JSON into Experiences, remembering the most recent ones keyed by
    their exact JSON: parsing and validating costs more than the query that found them.
    Thread-safe; an unreadable record is a StoreError naming ``where``."""

    def __init__(self, where: str, size: int = 4_096) -> None:
        self.where = where
        self.size = size
        self._lock = threading.Lock()
        self._recent: dict[str, Experience] = {}

    def recent(self, data: str) -> Experience | None:
        """The Experience decoded lately from exactly ``data``, if any."""
        return self._recent.get(data)

    def __call__(self, data: str, *, remember: bool = True) -> Experience:
        found = self._recent.get(data)
        if found is None:
            try:
                found = Experience.from_dict(json.loads(data))
            except ValueError as exc:  # JSONDecodeError and ValidationError
                raise StoreError(f"a record stored in {self.where} cannot be read: {exc}") from exc
            if remember:
                with self._lock:
                    if len(self._recent) >= self.size:
                        self._recent.pop(next(iter(self._recent)), None)
                    self._recent[data] = found
        return found


def lessons_query(
    scope: Scope, status: Status | None, *, table: str, mark: str, column: Callable[[str], str]
) -> tuple[str, list[Any]]:
    """The page query of ``Store.lessons`` (newest first, then id), without LIMIT/OFFSET
    values: the caller appends them to the returned parameters."""
    where, params = scope_predicate(scope, mark, column)
    if status is not None:
        where += f" AND e.status = {mark}"
        params.append(Status.parse(status).value)
    order = f"ORDER BY e.created_at DESC, e.id DESC LIMIT {mark} OFFSET {mark}"
    return f"SELECT e.data FROM {table} AS e WHERE {where} {order}", params
