"""The in-memory store's index: each (tenant, app, project) partition's records, inverted index
and groups by (team, agent, user), with the statistics BM25 needs (``MemoryStore``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from afteraction.core.text import searchable, stem, tokenize
from afteraction.model import ELIGIBLE_STATUSES, Experience, Scope

__all__ = ["K1", "TASK_WEIGHT", "B", "Doc", "Group", "Partition", "PartitionKey", "group_key", "partition_key"]

K1 = 1.2
B = 0.75
TASK_WEIGHT = 2.0

PartitionKey = tuple[str, str, str]  # (tenant, app, project)
GroupKey = tuple[str | None, str | None, str | None]  # (team, agent, user)


@dataclass(slots=True)
class Doc:
    """One stored record with what search needs: weighted term frequencies and length."""

    experience: Experience
    tf: dict[str, float]
    length: int

    @classmethod
    def of(cls, experience: Experience) -> Doc:
        tf: dict[str, float] = {}
        length = 0
        task, summary, lesson = searchable(experience)
        for text, weight in ((task, TASK_WEIGHT), (summary, 1.0), (lesson, 1.0)):
            for token in tokenize(text):
                key = stem(token)
                tf[key] = tf.get(key, 0.0) + weight
                length += 1
        return cls(experience, tf, length)

    def eligible(self, now: datetime, min_confidence: float) -> bool:
        exp = self.experience
        return (
            exp.status in ELIGIBLE_STATUSES
            and exp.confidence >= min_confidence
            and (exp.expires_at is None or exp.expires_at > now)
        )


@dataclass(slots=True)
class Group:
    """The records of one (team, agent, user) within a partition. ``stats`` caches, per
    confidence floor, the count and total length of status-eligible records at or above it."""

    ids: set[str] = field(default_factory=set)
    eligible: dict[str, Doc] = field(default_factory=dict)
    expiring: set[str] = field(default_factory=set)
    stats: dict[float, list[int]] = field(default_factory=dict)

    def add(self, doc: Doc) -> None:
        exp = doc.experience
        self.ids.add(exp.id)
        if exp.status in ELIGIBLE_STATUSES:
            self.eligible[exp.id] = doc
            if exp.expires_at is not None:
                self.expiring.add(exp.id)
            self._adjust(doc, 1)

    def remove(self, doc: Doc) -> None:
        exp = doc.experience
        self.ids.discard(exp.id)
        if self.eligible.pop(exp.id, None) is not None:
            self.expiring.discard(exp.id)
            self._adjust(doc, -1)

    def _adjust(self, doc: Doc, sign: int) -> None:
        for floor, totals in self.stats.items():
            if doc.experience.confidence >= floor:
                totals[0] += sign
                totals[1] += sign * doc.length

    def totals(self, now: datetime, min_confidence: float) -> tuple[int, int]:
        """(documents, total length) of the eligible records at ``now``."""
        totals = self.stats.get(min_confidence)
        if totals is None:
            if len(self.stats) >= 8:  # callers use one or two floors; do not grow without bound
                self.stats.clear()
            above = [d for d in self.eligible.values() if d.experience.confidence >= min_confidence]
            totals = self.stats[min_confidence] = [len(above), sum(d.length for d in above)]
        count, length = totals
        for id in self.expiring:
            doc = self.eligible[id]
            if doc.experience.confidence >= min_confidence and not doc.eligible(now, min_confidence):
                count -= 1  # eligible but for its expiry
                length -= doc.length
        return count, length


@dataclass(slots=True)
class Partition:
    """The records of one (tenant, app, project): an inverted index and the groups."""

    postings: dict[str, set[str]] = field(default_factory=dict)
    docs: dict[str, Doc] = field(default_factory=dict)
    groups: dict[GroupKey, Group] = field(default_factory=dict)

    def add(self, doc: Doc) -> None:
        exp = doc.experience
        self.docs[exp.id] = doc
        for term in doc.tf:
            self.postings.setdefault(term, set()).add(exp.id)
        self.groups.setdefault(group_key(exp.scope), Group()).add(doc)

    def remove(self, doc: Doc) -> None:
        exp = doc.experience
        del self.docs[exp.id]
        for term in doc.tf:
            ids = self.postings[term]
            ids.discard(exp.id)
            if not ids:
                del self.postings[term]
        key = group_key(exp.scope)
        group = self.groups[key]
        group.remove(doc)
        if not group.ids:
            del self.groups[key]

    def visible_groups(self, scope: Scope) -> list[Group]:
        options = [(None,) if getattr(scope, part) is None else (None, getattr(scope, part)) for part in Scope.OPTIONAL]
        keys = [(team, agent, user) for team in options[0] for agent in options[1] for user in options[2]]
        return [group for key in keys if (group := self.groups.get(key)) is not None]


def group_key(scope: Scope) -> GroupKey:
    return (scope.team, scope.agent, scope.user)


def partition_key(scope: Scope) -> PartitionKey:
    return (scope.tenant, scope.app, scope.project)
