"""``Store.delete`` on every backend: a deleted record, and everything derived from it, is gone
from every read; what the scope does not see is never deleted; deleting again is 0."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from afteraction.errors import ValidationError
from afteraction.store import Store
from afteraction.store.base import StoredVector, VectorStore
from tests.conformance.builders import NOW, SCOPE, experience, scoped
from tests.conformance.test_store import BACKENDS, PARAMS, ids, search

MODEL = "test-model@1"
GLOBEX = scoped(SCOPE, tenant="globex")


@pytest.fixture(params=PARAMS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    backend = BACKENDS[request.param](request, tmp_path)
    yield backend
    backend.close()


def vectors(store: Store) -> VectorStore:
    assert isinstance(store, VectorStore)
    return store


def unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def vec(id: str, vector: list[float], *, tenant: str = "acme") -> StoredVector:
    return StoredVector(tenant=tenant, id=id, revision=1, model=MODEL, vector=vector)


def near(store: Store, vector: list[float], scope: object = SCOPE) -> list[str]:
    return ids(vectors(store).search_vector(scope, MODEL, vector, now=NOW))  # type: ignore[arg-type]


def test_a_deleted_record_is_gone_from_every_read(store: Store) -> None:
    store.put_many([experience("a", lesson="Rotate the expired export token."), experience("b"), experience("c")])
    vectors(store).put_vectors([vec("a", unit(1, 0)), vec("b", unit(0, 1))])
    assert search(store, ["token"]) == ["a"] and near(store, unit(1, 0))[0] == "a"

    assert store.delete(SCOPE, ["a"]) == 1
    assert store.get(SCOPE, "a") is None
    assert search(store, ["token"]) == []
    assert near(store, unit(1, 0)) == ["b"]
    assert sorted(ids(store.lessons(SCOPE))) == ["b", "c"]
    assert store.count(SCOPE) == 2
    assert sorted(e.id for e in store.iter_all()) == ["b", "c"]
    assert "a" not in [e.id for e in vectors(store).missing_vectors(MODEL)]
    [info] = vectors(store).vector_models()
    assert (info.vectors, info.current) == (1, 1)


def test_deleting_again_or_an_unknown_id_is_zero_and_each_id_counts_once(store: Store) -> None:
    store.put_many([experience("a"), experience("b")])
    assert store.delete(SCOPE, ["a", "a", "ghost"]) == 1
    assert store.delete(SCOPE, ["a"]) == 0
    assert store.delete(SCOPE, []) == 0
    assert store.delete(SCOPE, ("b",)) == 1
    assert store.count(SCOPE) == 0


def test_a_scope_that_does_not_see_a_record_cannot_delete_it(store: Store) -> None:
    mine = scoped(SCOPE, user="u-1")
    store.put_many([experience("private", scope=mine), experience("shared")])
    for blind in (scoped(SCOPE, user="u-2"), scoped(SCOPE, project="billing"), SCOPE):
        assert store.delete(blind, ["private"]) == 0
    assert store.get(mine, "private") == experience("private", scope=mine)
    assert store.delete(scoped(SCOPE, user="u-2"), ["shared"]) == 1  # a record without a user: every user sees it
    assert store.delete(mine, ["private"]) == 1


def test_another_tenants_record_with_the_same_id_is_untouched(store: Store) -> None:
    store.put_many([experience("same", lesson="Acme's lesson."), experience("same", scope=GLOBEX)])
    vectors(store).put_vectors([vec("same", unit(1, 0)), vec("same", unit(1, 0), tenant="globex")])
    assert store.delete(SCOPE, ["same"]) == 1
    assert store.get(GLOBEX, "same") == experience("same", scope=GLOBEX)
    assert search(store, ["refund"], GLOBEX) == ["same"]
    assert near(store, unit(1, 0), GLOBEX) == ["same"]
    assert [e.scope.tenant for e in store.iter_all()] == ["globex"]


def test_a_vector_stored_after_deleting_the_newest_one_is_found(store: Store) -> None:
    store.put_many([experience("a"), experience("b")])
    vectors(store).put_vectors([vec("a", unit(1, 0))])
    vectors(store).put_vectors([vec("b", unit(0, 1))])  # the newest vector
    assert near(store, unit(0, 1))[0] == "b"  # any index is loaded up to it
    assert store.delete(SCOPE, ["b"]) == 1
    store.put(experience("c"))
    assert vectors(store).put_vectors([vec("c", unit(0, 1))]) == 1
    assert near(store, unit(0, 1)) == ["c", "a"]
    assert store.delete(SCOPE, ["a", "c"]) == 2  # every vector of the tenant and model gone
    store.put(experience("d"))
    vectors(store).put_vectors([vec("d", unit(1, 1))])
    assert near(store, unit(1, 1)) == ["d"]


def test_ids_must_be_a_list_of_strings(store: Store) -> None:
    store.put(experience("abc"))
    with pytest.raises(ValidationError, match="ids"):
        store.delete(SCOPE, "abc")
    with pytest.raises(ValidationError, match=r"ids\[1\]"):
        store.delete(SCOPE, ["abc", 7])  # type: ignore[list-item]
    assert store.count(SCOPE) == 1


def test_forgetting_a_user_deletes_their_records_in_every_app_and_project_and_nothing_else(store: Store) -> None:
    alice, bob = scoped(SCOPE, user="alice"), scoped(SCOPE, user="bob")
    alice_billing = scoped(SCOPE, app="billing", project="invoices", agent="biller", user="alice")
    store.put_many(
        [
            experience("a1", scope=alice, lesson="Rotate the expired export token."),
            experience("a2", scope=alice_billing),
            experience("b1", scope=bob),
            experience("shared"),  # no user: every user's, nobody's to erase
            experience("a1", scope=scoped(GLOBEX, user="alice")),  # another tenant's alice
        ]
    )
    vectors(store).put_vectors([vec("a1", unit(1, 0)), vec("b1", unit(0, 1)), vec("shared", unit(1, 1))])

    assert sorted(store.delete_user("acme", "alice")) == ["a1", "a2"]
    assert store.get(alice, "a1") is None and store.get(alice_billing, "a2") is None
    assert search(store, ["token"], alice) == []
    assert "a1" not in near(store, unit(1, 0), alice)
    assert sorted(e.id for e in store.iter_all("acme")) == ["b1", "shared"]
    assert store.get(scoped(GLOBEX, user="alice"), "a1") is not None
    assert store.delete_user("acme", "alice") == []  # erasing again: nothing left, no error


def test_forgetting_a_user_names_a_bad_tenant_or_user_and_deletes_nothing(store: Store) -> None:
    store.put(experience("a1", scope=scoped(SCOPE, user="alice")))
    for tenant, user, field in (("", "alice", "tenant"), ("acme", "", "user"), ("acme", None, "user")):
        with pytest.raises(ValidationError, match=f"^{field}"):
            store.delete_user(tenant, user)  # type: ignore[arg-type]
    assert store.count(scoped(SCOPE, user="alice")) == 1
