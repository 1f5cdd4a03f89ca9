"""afteraction.embed.wordllama: the bundled WordLlama model, offline (the embed-wordllama extra)."""

from __future__ import annotations

import math
import sys

import pytest

from afteraction.embed import Checked, Embedder
from afteraction.errors import ConfigError

pytest.importorskip("wordllama", reason="needs the embed-wordllama extra: pip install 'afteraction[embed-wordllama]'")

from afteraction.embed.wordllama import WordLlama


@pytest.fixture(scope="module")
def model() -> WordLlama:
    return WordLlama()


def dot(a: list[float], b: list[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def test_identity_unit_vectors_and_odd_texts(model: WordLlama) -> None:
    assert isinstance(model, Embedder)
    assert (model.model_id, model.dimension) == ("wordllama-l2_supercat-256", 256)
    texts = ["deploys were timing out", "", "   ", "🚀 ünïcödé", "x" * 100_000]
    vectors = Checked(model).embed(texts)  # Checked refuses NaN, zero vectors and wrong lengths
    assert [len(v) for v in vectors] == [256] * len(texts)
    assert all(math.isclose(dot(v, v), 1.0, abs_tol=1e-5) for v in model.embed(texts))
    assert model.embed([]) == []


def test_a_batch_equals_one_by_one(model: WordLlama) -> None:
    texts = ["the TLS certificate expired", "refund stuck in pending", "DNS lookups fail for the internal service"]
    batch = model.embed(texts)
    for text, vector in zip(texts, batch, strict=True):
        assert max(abs(a - b) for a, b in zip(model.embed([text])[0], vector, strict=True)) <= 1e-5


def test_a_shorter_dimension_is_a_prefix_with_its_own_model_id(model: WordLlama) -> None:
    short = WordLlama(dim=64)
    assert (short.model_id, short.dimension) == ("wordllama-l2_supercat-64", 64)
    (full,) = model.embed(["certificate expired"])
    (prefix,) = short.embed(["certificate expired"])
    norm = math.sqrt(dot(full[:64], full[:64]))
    assert max(abs(a - b / norm) for a, b in zip(prefix, full[:64], strict=True)) <= 1e-5
    with pytest.raises(ConfigError, match="dim"):
        WordLlama(dim=100)


def test_a_paraphrase_is_closer_than_an_unrelated_request(model: WordLlama) -> None:
    a, p, u = model.embed(["the disk on the database server is full", "postgres host ran out of disk space",
                           "plan the agenda for the company offsite"])  # fmt: skip
    assert dot(a, p) > dot(a, u) + 0.05


def test_a_missing_package_is_a_config_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wordllama", None)
    with pytest.raises(ConfigError, match=r"pip install 'afteraction\[embed-wordllama\]'"):
        WordLlama()
