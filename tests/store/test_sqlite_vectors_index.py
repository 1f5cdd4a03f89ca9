"""The in-process indexes on their own: the exact matrix (with usearch's brute force and with
numpy's) and the ANN index agree on the nearest keys, and a replaced vector replaces."""

from __future__ import annotations

import numpy as np
import pytest

from afteraction.store.vector_index import AnnIndex, ExactIndex


def rows(n: int, seed: int = 0) -> np.ndarray:
    found = np.random.default_rng(seed).standard_normal((n, 24)).astype(np.float32)
    return found / np.linalg.norm(found, axis=1, keepdims=True)


@pytest.mark.parametrize("brute_force", [True, False])
def test_the_exact_index_finds_the_nearest_keys_and_replaces_vectors(brute_force: bool) -> None:
    index = ExactIndex(24)
    if not brute_force:
        index._brute_force = None  # numpy's matrix-vector product
    data = rows(3000)
    keys = [10 * i + 7 for i in range(3000)]
    index.upsert(keys[:1000], data[:1000])
    index.upsert(keys[1000:], data[1000:])  # grows past its first capacity
    assert len(index) == 3000
    query = data[5]
    expected = [keys[i] for i in np.argsort(-(data @ query), kind="stable")[:10]]
    assert index.nearest(query, 10) == expected
    index.upsert([keys[5]], -data[5:6])  # replaced: now the farthest
    assert len(index) == 3000
    assert keys[5] not in index.nearest(query, 10)
    assert index.nearest(query, 5000)[-1] == keys[5]
    assert ExactIndex(24).nearest(query, 10) == []


def test_the_ann_index_agrees_with_the_exact_one_and_replaces_vectors() -> None:
    data = rows(800, seed=1)
    exact, ann = ExactIndex(24), AnnIndex(24)
    keys = list(range(1, 801))
    exact.upsert(keys, data)
    ann.upsert(keys, data)
    hits = [len(set(ann.nearest(q, 10)) & set(exact.nearest(q, 10))) for q in data[:50]]
    assert sum(hits) / (10 * len(hits)) >= 0.95
    ann.upsert([1], -data[0:1])
    assert len(ann) == 800
    assert 1 not in ann.nearest(data[0], 10)
    assert np.allclose(ann.vectors([1])[0], -data[0], atol=2e-3)


@pytest.mark.parametrize("kind", ["exact", "ann"])
def test_a_removed_key_is_never_nearest_again(kind: str) -> None:
    data = rows(300, seed=2)
    index = ExactIndex(24) if kind == "exact" else AnnIndex(24)
    index.upsert(list(range(300)), data)
    index.remove([5, 299, 5, 1000])  # the last row, a repeat and an absent key too
    assert len(index) == 298
    found = index.nearest(data[5], 300)
    assert 5 not in found and 299 not in found and len(found) == 298
    assert index.nearest(data[7], 1) == [7]
    index.upsert([5], data[5:6])  # and it may come back
    assert index.nearest(data[5], 1) == [5]
