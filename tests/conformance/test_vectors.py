"""The VectorStore contract, run against every backend that keeps vectors.

A backend joins by adding its name to ``VECTOR_BACKENDS`` (its factory is the one in
``test_store.BACKENDS``)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from afteraction.errors import ValidationError
from afteraction.model import Scope, Status
from afteraction.store.base import StoredVector, VectorStore
from tests.conformance.builders import NOW, SCOPE, experience, scoped
from tests.conformance.test_store import BACKENDS

VECTOR_BACKENDS = ["memory", "postgres", "sqlite"]
MODEL = "test-model@1"
OTHER_MODEL = "other-model@1"


@pytest.fixture(
    params=[pytest.param(name, marks=[pytest.mark.postgres] if name == "postgres" else []) for name in VECTOR_BACKENDS]
)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    backend = BACKENDS[request.param](request, tmp_path)
    assert isinstance(backend, VectorStore)
    yield backend
    backend.close()  # type: ignore[attr-defined]


def unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def vec(
    id: str, vector: Sequence[float], *, tenant: str = "acme", revision: int = 1, model: str = MODEL
) -> StoredVector:
    return StoredVector(tenant=tenant, id=id, revision=revision, model=model, vector=vector)


def search(store: VectorStore, vector: Sequence[float], scope: Scope = SCOPE, model: str = MODEL) -> list[str]:
    return [c.experience.id for c in store.search_vector(scope, model, vector, now=NOW)]


def put(store: VectorStore, *experiences: object) -> None:
    store.put_many(list(experiences))  # type: ignore[attr-defined]


def test_most_similar_first_with_the_cosine(store: VectorStore) -> None:
    put(store, experience("a"), experience("b"), experience("c"))
    assert store.put_vectors([vec("a", unit(1, 0, 0)), vec("b", unit(1, 1, 0)), vec("c", unit(0, 0, 1))]) == 3
    found = store.search_vector(SCOPE, MODEL, unit(1, 0, 0), now=NOW, limit=2)
    assert [c.experience.id for c in found] == ["a", "b"]
    assert found[0].vector_score == pytest.approx(1.0)
    assert found[1].vector_score == pytest.approx(math.sqrt(0.5))
    assert found[0].text_score == 0.0


def test_a_vector_is_written_only_at_the_records_revision(store: VectorStore) -> None:
    put(store, experience("a"))
    assert store.put_vectors([vec("a", unit(1, 0), revision=2), vec("ghost", unit(1, 0))]) == 0
    assert search(store, unit(1, 0)) == []
    assert store.put_vectors([vec("a", unit(1, 0), revision=1)]) == 1
    assert search(store, unit(1, 0)) == ["a"]


def test_an_updated_record_stops_using_its_old_vector(store: VectorStore) -> None:
    put(store, experience("a"))
    store.put_vectors([vec("a", unit(1, 0))])
    store.update(replace(experience("a"), lesson="Changed."), expected_revision=1)  # type: ignore[attr-defined]
    assert search(store, unit(1, 0)) == []
    assert [e.id for e in store.missing_vectors(MODEL)] == ["a"]
    assert store.put_vectors([vec("a", unit(1, 0), revision=1)]) == 0  # a slow, stale embedding is dropped
    assert store.put_vectors([vec("a", unit(0, 1), revision=2)]) == 1
    assert search(store, unit(0, 1)) == ["a"]


def test_vectors_of_another_model_are_never_compared(store: VectorStore) -> None:
    put(store, experience("a"), experience("b"))
    store.put_vectors([vec("a", unit(1, 0)), vec("b", unit(1, 0), model=OTHER_MODEL)])
    assert search(store, unit(1, 0)) == ["a"]
    assert search(store, unit(1, 0), model=OTHER_MODEL) == ["b"]
    assert search(store, unit(1, 0), model="never-stored") == []
    assert [e.id for e in store.missing_vectors(OTHER_MODEL)] == ["a"]


def test_a_query_of_another_length_is_refused(store: VectorStore) -> None:
    put(store, experience("a"))
    store.put_vectors([vec("a", unit(1, 0, 0))])
    with pytest.raises(ValidationError) as caught:
        store.search_vector(SCOPE, MODEL, unit(1, 0), now=NOW)
    assert caught.value.field == "vector"


def test_search_keeps_scope_and_eligibility(store: VectorStore) -> None:
    other_tenant = Scope(tenant="globex", app="support", project="refunds")
    put(
        store,
        experience("mine"),
        experience("other-project", scope=scoped(SCOPE, project="billing")),
        experience("other-agent", scope=scoped(SCOPE, agent="someone-else")),
        experience("theirs", scope=other_tenant),
        experience("quarantined", status=Status.QUARANTINED),
        experience("doubtful", confidence=0.2),
        experience("expired", expires_at=NOW - timedelta(days=1)),
    )
    ids = ["mine", "other-project", "other-agent", "quarantined", "doubtful", "expired"]
    store.put_vectors([vec(id, unit(1, 0)) for id in ids] + [vec("theirs", unit(1, 0), tenant="globex")])
    assert search(store, unit(1, 0)) == ["mine"]
    assert search(store, unit(1, 0), other_tenant) == ["theirs"]


def test_missing_vectors_pages_in_key_order(store: VectorStore) -> None:
    put(store, *(experience(f"e{i}") for i in range(5)), experience("x", scope=Scope("globex", "support", "refunds")))
    store.put_vectors([vec("e1", unit(1, 0))])
    assert [e.id for e in store.missing_vectors(MODEL, tenant="acme")] == ["e0", "e2", "e3", "e4"]
    first = store.missing_vectors(MODEL, limit=2)
    assert [e.id for e in first] == ["e0", "e2"]
    rest = store.missing_vectors(MODEL, after=(first[-1].scope.tenant, first[-1].id))
    assert [(e.scope.tenant, e.id) for e in rest] == [("acme", "e3"), ("acme", "e4"), ("globex", "x")]
