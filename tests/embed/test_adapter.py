"""afteraction.embed.adapter: the default embedder's learned linear map, applied and checked.

Needs the ``embed`` extra, as the MiniLM tests do (``AFTERACTION_SKIP_EMBED=1`` skips them).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from afteraction.embed import Checked
from afteraction.embed.adapter import ADAPTER_NAME, ADAPTER_PATH, ADAPTER_SHA256, Adapted, load_matrix
from afteraction.embed.files import sha256_of
from afteraction.embed.minilm import DIMENSION, MiniLM
from afteraction.errors import ConfigError, EmbedderError

TRAINING = Path(__file__).resolve().parents[2] / "benchmarks" / "adapter_training"
TEXTS = [
    "Consumers of the orders topic rebalance in a loop after the deploy",
    "our event readers keep reshuffling who owns which partition and never settle",
    "book a meeting room for Thursday",
]


class Plain:
    """A scripted embedder of a fixed dimension: the vector of a text is a function of its length."""

    model_id = "plain"

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float((len(text) * (i + 1)) % 7 + 1) for i in range(self.dimension)] for text in texts]


def test_the_shipped_matrix_is_the_one_pinned() -> None:
    assert sha256_of(ADAPTER_PATH) == ADAPTER_SHA256
    matrix = load_matrix(ADAPTER_PATH, ADAPTER_SHA256, DIMENSION)
    assert matrix.shape == (DIMENSION, DIMENSION) and matrix.dtype == np.float32
    assert not np.allclose(matrix, np.eye(DIMENSION))  # a trained map, not the identity


def test_adapted_vectors_are_the_base_vectors_mapped_and_unit_length(minilm: MiniLM) -> None:
    adapted = Adapted(minilm)
    assert adapted.model_id == f"{minilm.model_id}+{ADAPTER_NAME}" and adapted.dimension == DIMENSION
    base = np.asarray(minilm.embed(TEXTS), dtype=np.float32)
    matrix = np.load(ADAPTER_PATH)
    expected = base @ matrix.T
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    got = np.asarray(adapted.embed(TEXTS))
    assert np.abs(got - expected).max() <= 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert np.abs(got - base).max() > 0.01  # the map changes what is compared
    assert adapted.embed([]) == []


def test_the_map_sets_a_request_further_apart_from_its_lesson_s_near_neighbours(minilm: MiniLM) -> None:
    """On a few clusters of the training set (five lessons of one system each, five requests per
    lesson): the mean margin of a request's own lesson over its nearest sibling grows."""
    clusters = json.loads((TRAINING / "data.json").read_text(encoding="utf-8"))["clusters"][:4]
    lessons = [lesson for cluster in clusters for lesson in cluster["lessons"]]
    requests = [request for cluster in clusters for request in cluster["queries"]]
    own = np.array([[lesson["id"] == request["lesson"] for lesson in lessons] for request in requests])
    of_lesson = [c for c, cluster in enumerate(clusters) for _ in cluster["lessons"]]
    of_request = [c for c, cluster in enumerate(clusters) for _ in cluster["queries"]]
    same = np.array([[c == r for c in of_lesson] for r in of_request])
    texts = [f"{lesson['task']}\n{lesson['symptom']}" for lesson in lessons]

    def margin(embedder: MiniLM | Adapted) -> float:
        cos = np.asarray(embedder.embed([r["text"] for r in requests])) @ np.asarray(embedder.embed(texts)).T
        return float(np.mean(cos[own] - np.where(same & ~own, cos, -9).max(axis=1)))

    assert margin(Adapted(minilm)) > margin(minilm) + 0.02


def test_a_tampered_matrix_is_refused_every_time(tmp_path: Path) -> None:
    copy = tmp_path / "lessons-v1.npy"
    shutil.copyfile(ADAPTER_PATH, copy)
    data = bytearray(copy.read_bytes())
    data[-1] ^= 0xFF
    copy.write_bytes(bytes(data))
    adapted = Adapted(Plain(DIMENSION), path=copy)
    for _ in range(2):
        with pytest.raises(ConfigError, match="sha256 .* expected " + ADAPTER_SHA256):
            adapted.embed(["x"])
    with pytest.raises(ConfigError, match="cannot be read"):
        Adapted(Plain(DIMENSION), path=tmp_path / "missing.npy").load()


def test_a_matrix_of_another_shape_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "small.npy"
    np.save(path, np.eye(4, dtype=np.float32))
    with pytest.raises(ConfigError, match="not a finite 3×3 float32 matrix"):
        Adapted(Plain(3), path=path, sha256=sha256_of(path)).load()
    adapted = Adapted(Plain(4), path=path, sha256=sha256_of(path))
    plain = np.asarray(Plain(4).embed(["abc"]))
    assert np.allclose(adapted.embed(["abc"]), plain / np.linalg.norm(plain))  # the identity keeps the direction


def test_an_inner_embedder_of_another_length_is_an_embedder_error_through_checked(tmp_path: Path) -> None:
    path = tmp_path / "four.npy"
    np.save(path, np.eye(4, dtype=np.float32))

    class Liar(Plain):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[1.0, 2.0] for _ in texts]  # states 4 dimensions, gives 2

    checked = Checked(Adapted(Liar(4), path=path, sha256=sha256_of(path)))
    with pytest.raises(EmbedderError, match="the inner model gave 2 dimensions, the adapter takes 4"):
        checked.embed(["x"])
