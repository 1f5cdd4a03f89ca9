"""MemoryStore: the in-process backend, for tests, notebooks and short-lived agents.

Rows live in a dict keyed by (tenant, id), behind one lock. Search is BM25 (k1 1.2, b 0.75)
over Snowball stems of task, summary and lesson, task weighted 2 like the SQLite backend.
Each (tenant, app, project) has its own inverted index, and the corpus statistics (number of
documents, average length, document frequencies) are taken over the rows the caller sees that
are eligible, so rows the caller may not see never influence a score.
"""

from __future__ import annotations

import heapq
import math
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime

from afteraction.core.text import stem, tokenize
from afteraction.errors import ConflictError, NotFoundError, ValidationError
from afteraction.model import Experience, Scope, Status
from afteraction.store.base import (
    Candidate,
    StoredVector,
    VectorModelInfo,
    check_ids,
    check_names,
    check_owner,
    check_page,
)
from afteraction.store.memory_index import K1, B, Doc, Partition, PartitionKey, partition_key

__all__ = ["MemoryStore"]

_Key = tuple[str, str]  # (tenant, id)


class MemoryStore:
    """An in-process, thread-safe ``Store``. Nothing survives the process."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._rows: dict[_Key, Doc] = {}
        self._partitions: dict[PartitionKey, Partition] = {}
        self._vectors: dict[_Key, dict[str, tuple[int, tuple[float, ...]]]] = {}  # model → (revision, vector)

    def __repr__(self) -> str:
        return f"MemoryStore(<{len(self._rows)} records>)"

    # writes

    def put(self, experience: Experience) -> bool:
        return self.put_many([experience]) == 1

    def put_many(self, experiences: Sequence[Experience]) -> int:
        for i, experience in enumerate(experiences):
            if not isinstance(experience, Experience):
                raise ValidationError(f"experiences[{i}]", f"must be an Experience, got {type(experience).__name__}")
        docs = [Doc.of(experience) for experience in experiences]  # everything that can fail, before any change
        inserted = 0
        with self._lock:
            for doc in docs:
                key = (doc.experience.scope.tenant, doc.experience.id)
                if key not in self._rows:
                    self._insert(key, doc)
                    inserted += 1
        return inserted

    def update(self, experience: Experience, *, expected_revision: int) -> Experience:
        key = (experience.scope.tenant, experience.id)
        with self._lock:
            current = self._rows.get(key)
            if current is None:
                raise NotFoundError(f"no record {experience.id!r} in tenant {experience.scope.tenant!r} to update")
            stored = current.experience.revision
            if stored != expected_revision:
                raise ConflictError(
                    f"record {experience.id!r} is at revision {stored}, not {expected_revision}: "
                    "it changed since it was read; read it again and retry"
                )
            updated = replace(experience, revision=expected_revision + 1)
            doc = Doc.of(updated)
            self._remove(key, current)
            self._insert(key, doc)
            return updated

    def delete(self, scope: Scope, ids: Sequence[str]) -> int:
        deleted = 0
        with self._lock:
            for id in check_ids(ids):
                key = (scope.tenant, id)
                doc = self._rows.get(key)
                if doc is not None and scope.sees(doc.experience.scope):
                    self._remove(key, doc)
                    self._vectors.pop(key, None)
                    deleted += 1
        return deleted

    def delete_user(self, tenant: str, user: str) -> list[str]:
        tenant, user = check_owner(tenant, user)
        with self._lock:
            owned = [
                (key, doc) for key, doc in self._rows.items() if key[0] == tenant and doc.experience.scope.user == user
            ]
            for key, doc in owned:
                self._remove(key, doc)
                self._vectors.pop(key, None)
        return [key[1] for key, _ in owned]

    def _insert(self, key: _Key, doc: Doc) -> None:
        self._rows[key] = doc
        self._partitions.setdefault(partition_key(doc.experience.scope), Partition()).add(doc)

    def _remove(self, key: _Key, doc: Doc) -> None:
        del self._rows[key]
        pkey = partition_key(doc.experience.scope)
        partition = self._partitions[pkey]
        partition.remove(doc)
        if not partition.docs:
            del self._partitions[pkey]

    # reads

    def get(self, scope: Scope, id: str) -> Experience | None:
        with self._lock:
            doc = self._rows.get((scope.tenant, id))
        if doc is None or not scope.sees(doc.experience.scope):
            return None
        return doc.experience

    def search_text(
        self,
        scope: Scope,
        terms: Sequence[str],
        *,
        now: datetime,
        limit: int = 50,
        min_confidence: float = 0.5,
    ) -> list[Candidate]:
        query = list(dict.fromkeys(stem(token) for term in terms for token in tokenize(term)))
        if not query or limit <= 0:
            return []
        with self._lock:
            partition = self._partitions.get(partition_key(scope))
            if partition is None:
                return []
            groups = partition.visible_groups(scope)
            postings = [partition.postings.get(term, set()) for term in query]
            candidates: set[str] = set().union(*postings)
            # The visible, eligible records holding any term, each checked once.
            found: dict[str, Doc] = {}
            for group in groups:
                eligible = group.eligible
                small, large = (candidates, eligible) if len(candidates) <= len(eligible) else (eligible, candidates)
                for id in small:
                    if id in large:
                        doc = eligible[id]
                        exp = doc.experience
                        if exp.confidence >= min_confidence and (exp.expires_at is None or exp.expires_at > now):
                            found[id] = doc
            if not found:
                return []
            documents = total = 0
            for group in groups:
                count, length = group.totals(now, min_confidence)
                documents += count
                total += length
            average = total / documents if documents and total else 1.0
            found_ids = set(found)
            scores = dict.fromkeys(found, 0.0)
            for term, ids in zip(query, postings, strict=True):
                hits = ids & found_ids
                idf = math.log(1.0 + (documents - len(hits) + 0.5) / (len(hits) + 0.5))
                for id in hits:
                    doc = found[id]
                    tf = doc.tf[term]
                    scores[id] += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * doc.length / average))
        best = heapq.nlargest(limit, scores.items(), key=lambda item: (item[1], item[0]))
        return [Candidate(found[id].experience, score, frozenset(found[id].tf)) for id, score in best]

    def lessons(
        self,
        scope: Scope,
        *,
        limit: int = 50,
        offset: int = 0,
        status: Status | None = None,
    ) -> list[Experience]:
        if not check_page(limit, offset):
            return []
        with self._lock:
            rows = self._visible(scope)
        if status is not None:
            rows = [exp for exp in rows if exp.status is status]
        rows.sort(key=lambda exp: (exp.created_at, exp.id), reverse=True)
        return rows[offset : offset + limit]

    def count(self, scope: Scope) -> int:
        with self._lock:
            partition = self._partitions.get(partition_key(scope))
            if partition is None:
                return 0
            return sum(len(group.ids) for group in partition.visible_groups(scope))

    def iter_all(self, tenant: str | None = None) -> Iterator[Experience]:
        with self._lock:
            keys = sorted(key for key in self._rows if tenant is None or key[0] == tenant)
            rows = [self._rows[key].experience for key in keys]
        yield from rows

    def _visible(self, scope: Scope) -> list[Experience]:
        partition = self._partitions.get(partition_key(scope))
        if partition is None:
            return []
        return [partition.docs[id].experience for group in partition.visible_groups(scope) for id in group.ids]

    # vectors

    def put_vectors(self, vectors: Sequence[StoredVector]) -> int:
        checked = [(item, tuple(float(x) for x in item.vector)) for item in vectors]
        stored = 0
        with self._lock:
            for item, vector in checked:
                doc = self._rows.get((item.tenant, item.id))
                if doc is not None and doc.experience.revision == item.revision:
                    self._vectors.setdefault((item.tenant, item.id), {})[item.model] = (item.revision, vector)
                    stored += 1
        return stored

    def search_vector(
        self,
        scope: Scope,
        model: str,
        vector: Sequence[float],
        *,
        now: datetime,
        limit: int = 50,
        min_confidence: float = 0.5,
    ) -> list[Candidate]:
        query = tuple(float(x) for x in vector)
        if limit <= 0:
            return []
        scored: list[tuple[float, str, Doc]] = []
        with self._lock:
            partition = self._partitions.get(partition_key(scope))
            if partition is None:
                return []
            for group in partition.visible_groups(scope):
                for id, doc in group.eligible.items():
                    found = self._vectors.get((scope.tenant, id), {}).get(model)
                    if found is None or found[0] != doc.experience.revision or not doc.eligible(now, min_confidence):
                        continue
                    if len(found[1]) != len(query):
                        raise ValidationError(
                            "vector", f"has {len(query)} dimensions; {model!r} vectors here have {len(found[1])}"
                        )
                    scored.append((sum(a * b for a, b in zip(query, found[1], strict=True)), id, doc))
        best = heapq.nlargest(limit, scored, key=lambda item: (item[0], item[1]))
        return [Candidate(doc.experience, 0.0, frozenset(doc.tf), score) for score, _, doc in best]

    def missing_vectors(
        self,
        model: str,
        *,
        limit: int = 256,
        tenant: str | None = None,
        after: tuple[str, str] | None = None,
        unreadable: list[tuple[str, str, str]] | None = None,  # records held as objects: never unreadable
    ) -> list[Experience]:
        with self._lock:
            missing = []
            for key in sorted(self._rows):
                if (tenant is not None and key[0] != tenant) or (after is not None and key <= after):
                    continue
                experience = self._rows[key].experience
                found = self._vectors.get(key, {}).get(model)
                if found is None or found[0] != experience.revision:
                    missing.append(experience)
                    if len(missing) >= limit:
                        break
        return missing

    def vector_models(self, *, tenant: str | None = None) -> list[VectorModelInfo]:
        check_names(None, tenant)
        counts: dict[tuple[str, int], list[int]] = {}  # (model, dimension) → [vectors, current]
        with self._lock:
            for key, by_model in self._vectors.items():
                if tenant is not None and key[0] != tenant:
                    continue
                doc = self._rows.get(key)
                for model, (revision, vector) in by_model.items():
                    count = counts.setdefault((model, len(vector)), [0, 0])
                    count[0] += 1
                    count[1] += doc is not None and doc.experience.revision == revision
        return [VectorModelInfo(model, dimension, *count) for (model, dimension), count in sorted(counts.items())]

    def drop_vectors(self, model: str, *, tenant: str | None = None) -> int:
        check_names(model, tenant)
        dropped = 0
        with self._lock:
            for key in [key for key in self._vectors if tenant is None or key[0] == tenant]:
                by_model = self._vectors[key]
                if by_model.pop(model, None) is not None:
                    dropped += 1
                if not by_model:
                    del self._vectors[key]
        return dropped

    def close(self) -> None:
        """Nothing to release; the records stay readable until the object is dropped."""
