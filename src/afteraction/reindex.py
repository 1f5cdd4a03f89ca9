"""Reindexing: give every stored record a vector of the current embedding model.

``reindex`` pages through ``VectorStore.missing_vectors`` in (tenant, id) order and embeds each
page through ``index_experiences`` (the one path from records to vectors, with its revision
guard). A page the embedder fails on is skipped (``after=`` moves past it) and reported; a
record that changed while it was being embedded keeps no vector (the next pass embeds it). A
record stored unreadable (its JSON cannot be decoded) is passed over by the store and
reported, one ``FailedBatch`` each, counted in ``unreadable``; the others are embedded.
Then the store's vector index is brought up to date when the store has one (SQLite).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from afteraction.embed.base import Checked
from afteraction.errors import ConfigError, EmbedderError, ValidationError
from afteraction.indexing import index_experiences
from afteraction.model import Experience
from afteraction.store.base import Store, VectorStore

__all__ = ["FailedBatch", "ReindexReport", "reindex"]


@dataclass(frozen=True, slots=True)
class FailedBatch:
    """A page the embedder failed on: its first and last (tenant, id) and why."""

    first: tuple[str, str]
    last: tuple[str, str]
    records: int
    error: str


@dataclass(slots=True)
class ReindexReport:
    model: str
    embedded: int = 0  # vectors stored
    changed: int = 0  # embedded, but the record had moved on: no vector stored
    unreadable: int = 0  # records stored unreadable, passed over (each also in ``failed``)
    failed: list[FailedBatch] = field(default_factory=list)
    indexes: list[Any] = field(default_factory=list)  # the store's index states, when it has an index

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "embedded": self.embedded,
            "changed": self.changed,
            "unreadable": self.unreadable,
            "failed": [
                {"first": list(f.first), "last": list(f.last), "records": f.records, "error": f.error}
                for f in self.failed
            ],
            "indexes": [
                {"tenant": s.tenant, "kind": s.kind, "vectors": s.vectors, "built": s.built, "reason": s.reason}
                for s in self.indexes
            ],
        }


def count_missing(store: Store, model: str, tenant: str | None = None) -> int | None:
    """How many records lack a current vector of ``model``, when the store can tell cheaply."""
    counter = getattr(store, "count_missing_vectors", None)
    return int(counter(model, tenant=tenant)) if callable(counter) else None


def reindex(
    store: Store,
    embedder: Checked,
    *,
    batch: int = 64,
    tenant: str | None = None,
    rebuild_index: bool = False,
    progress: Callable[[int], None] | None = None,
) -> ReindexReport:
    """Embed every record of ``store`` (of one ``tenant`` if given) with no current vector of
    ``embedder.model_id``, ``batch`` at a time, then update the store's vector index
    (``rebuild_index``: rebuild it from the stored vectors). ``progress`` gets the number of
    records handled after each page. A record the store cannot read is passed over and listed in
    ``failed`` (and counted in ``unreadable``); it does not cost the others their vectors."""
    if not isinstance(store, VectorStore):
        raise ConfigError(f"{store!r} keeps no vectors: reindex needs an SQLite, PostgreSQL or in-memory store")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValidationError("batch", f"must be a positive integer, got {batch!r}")
    report = ReindexReport(embedder.model_id)
    after: tuple[str, str] | None = None
    seen: set[tuple[str, str]] = set()
    while True:
        page, passed = _next(store, embedder.model_id, batch, tenant, after, report, seen)
        if progress is not None and passed:
            progress(passed)
        if not page:
            break
        first, last = (page[0].scope.tenant, page[0].id), (page[-1].scope.tenant, page[-1].id)
        try:
            stored = index_experiences(store, embedder, page)
        except EmbedderError as exc:
            report.failed.append(FailedBatch(first, last, len(page), str(exc)))
        else:
            report.embedded += stored
            report.changed += len(page) - stored
        after = last
        if progress is not None:
            progress(len(page))
    build = getattr(store, "build_vector_index", None)
    if callable(build):
        report.indexes = list(build(embedder.model_id, tenant=tenant, rebuild=rebuild_index))
    return report


def _next(
    store: VectorStore,
    model: str,
    batch: int,
    tenant: str | None,
    after: tuple[str, str] | None,
    report: ReindexReport,
    seen: set[tuple[str, str]],
) -> tuple[list[Experience], int]:
    """The next page to embed, and how many records stored unreadable the store passed over on the
    way; each goes to ``report`` once (the store passes over one again when a page ends before it)."""
    passed: list[tuple[str, str, str]] = []
    page = store.missing_vectors(model, limit=batch, tenant=tenant, after=after, unreadable=passed)
    new = 0
    for key_tenant, id, why in passed:
        if (key_tenant, id) not in seen:
            seen.add((key_tenant, id))
            report.failed.append(FailedBatch((key_tenant, id), (key_tenant, id), 1, why))
            new += 1
    report.unreadable += new
    return page, new
