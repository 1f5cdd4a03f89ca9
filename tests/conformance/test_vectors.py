"""The VectorStore contract, run against every backend that keeps vectors.

A backend joins by adding its name to ``VECTOR_BACKENDS`` (its factory is the one in
``test_store.BACKENDS``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields, replace
from datetime import timedelta
from pathlib import Path

import pytest

from afteraction.errors import ValidationError
from afteraction.model import Experience, Scope, Status
from afteraction.store.base import StoredVector, VectorModelInfo, VectorStore
from afteraction.store.records import settled
from tests.conformance.builders import NOW, SCOPE, experience, large_experience, scoped
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


# listing and dropping a model's vectors

GLOBEX = Scope("globex", "support", "refunds")


def two_models_two_tenants(store: VectorStore) -> None:
    """acme: a, b, c with MODEL vectors (2 dimensions), a with OTHER_MODEL (3); globex: x with MODEL."""
    put(store, experience("a"), experience("b"), experience("c"), experience("x", scope=GLOBEX))
    stored = [vec(id, unit(1, i)) for i, id in enumerate("abc")] + [vec("x", unit(1, 0), tenant="globex")]
    assert store.put_vectors([*stored, vec("a", unit(1, 0, 1), model=OTHER_MODEL)]) == 5


def test_vector_models_count_each_models_vectors_and_the_current_ones(store: VectorStore) -> None:
    two_models_two_tenants(store)
    store.update(replace(experience("b"), lesson="Changed."), expected_revision=1)  # type: ignore[attr-defined]
    assert store.vector_models() == [VectorModelInfo(OTHER_MODEL, 3, 1, 1), VectorModelInfo(MODEL, 2, 4, 3)]
    assert store.vector_models(tenant="acme") == [
        VectorModelInfo(OTHER_MODEL, 3, 1, 1),
        VectorModelInfo(MODEL, 2, 3, 2),
    ]
    assert store.vector_models(tenant="globex") == [VectorModelInfo(MODEL, 2, 1, 1)]
    assert store.vector_models(tenant="initech") == []
    assert store.vector_models()[1].to_dict() == {"model": MODEL, "dimension": 2, "vectors": 4, "current": 3}


def test_dropping_a_model_leaves_the_other_models_vectors(store: VectorStore) -> None:
    two_models_two_tenants(store)
    assert store.missing_vectors(MODEL) == []  # a pass that found nothing to do (SQLite: moves its mark)
    assert store.drop_vectors(MODEL) == 4
    assert search(store, unit(1, 0)) == []
    assert search(store, unit(1, 0), GLOBEX) == []
    assert search(store, unit(1, 0, 1), model=OTHER_MODEL) == ["a"]
    assert [(e.scope.tenant, e.id) for e in store.missing_vectors(MODEL)] == [
        ("acme", "a"),
        ("acme", "b"),
        ("acme", "c"),
        ("globex", "x"),
    ]
    assert store.vector_models() == [VectorModelInfo(OTHER_MODEL, 3, 1, 1)]
    assert store.drop_vectors(MODEL) == 0


def test_dropping_one_tenants_vectors_leaves_the_other_tenants(store: VectorStore) -> None:
    two_models_two_tenants(store)
    assert store.missing_vectors(MODEL) == []
    assert store.drop_vectors(MODEL, tenant="globex") == 1
    assert search(store, unit(1, 0), GLOBEX) == []
    assert search(store, unit(1, 0)) == ["a", "b", "c"]
    assert [(e.scope.tenant, e.id) for e in store.missing_vectors(MODEL)] == [("globex", "x")]
    assert store.vector_models() == [VectorModelInfo(OTHER_MODEL, 3, 1, 1), VectorModelInfo(MODEL, 2, 3, 3)]


def test_dropping_a_model_with_no_vectors_drops_nothing(store: VectorStore) -> None:
    two_models_two_tenants(store)
    assert store.drop_vectors("never-stored") == 0
    assert store.drop_vectors(MODEL, tenant="initech") == 0
    assert len(store.vector_models()) == 2


def test_a_dropped_model_can_be_stored_again_at_another_dimension(store: VectorStore) -> None:
    two_models_two_tenants(store)
    assert search(store, unit(1, 0)) == ["a", "b", "c"]  # in use (SQLite: its index is loaded)
    store.drop_vectors(MODEL)
    assert store.put_vectors([vec("c", unit(0, 0, 0, 1)), vec("a", unit(1, 0, 0, 0))]) == 2
    assert search(store, unit(0, 0, 0, 1)) == ["c", "a"]
    assert store.vector_models(tenant="acme")[1] == VectorModelInfo(MODEL, 4, 2, 2)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda s: s.drop_vectors(""), "model"),
        (lambda s: s.drop_vectors(" "), "model"),
        (lambda s: s.drop_vectors(MODEL, tenant=""), "tenant"),
        (lambda s: s.vector_models(tenant=""), "tenant"),
    ],
)
def test_an_empty_model_or_tenant_is_refused(
    store: VectorStore, call: Callable[[VectorStore], object], field: str
) -> None:
    two_models_two_tenants(store)
    with pytest.raises(ValidationError) as caught:
        call(store)
    assert caught.value.field == field
    assert len(store.vector_models()) == 2


@pytest.mark.parametrize("channel", ["text", "vector"])
def test_a_found_record_is_the_stored_one_in_every_field(store: VectorStore, channel: str) -> None:
    # Stores may decode a candidate only as far as ranking reads it (store/records.py): to a caller
    # it must still be the stored record, times to the microsecond, with or without end times.
    stored = replace(
        large_experience("rich"),
        updated_at=NOW - timedelta(hours=3, microseconds=17),
        expires_at=NOW + timedelta(days=30, microseconds=1),
        revision=1,
    )
    plain = experience("plain", task="Billing export is late", scope=stored.scope)
    put(store, stored, plain)
    store.put_vectors([vec("rich", unit(1, 0), revision=1), vec("plain", unit(0, 1))])
    if channel == "text":
        found = store.search_text(stored.scope, ["billing", "migrate"], now=NOW)  # type: ignore[attr-defined]
    else:
        found = store.search_vector(stored.scope, MODEL, unit(1, 0), now=NOW)
    got = {c.experience.id: c.experience for c in found}
    assert set(got) == {"rich", "plain"}
    for want in (stored, plain):
        for field in fields(Experience):
            assert getattr(got[want.id], field.name) == getattr(want, field.name), (want.id, field.name)
        assert got[want.id] == want and got[want.id].to_dict() == want.to_dict()
        assert settled(got[want.id]) == want and type(settled(got[want.id])) is Experience
