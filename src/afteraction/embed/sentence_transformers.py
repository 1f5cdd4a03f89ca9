"""A thin adapter over a sentence-transformers model (``SentenceTransformer``), for any of its models.

``SentenceTransformersEmbedder("all-mpnet-base-v2")`` loads the model by name or path as
sentence-transformers does (from its cache, or downloading it: that is the library's business, not
afteraction's); ``SentenceTransformersEmbedder(model=instance)`` wraps a model already loaded.

- ``model_id`` is ``st:{name}`` (the name or path given, or the loaded model's own name), so
  vectors of another model are never compared; ``dimension`` is the model's output dimension.
- Vectors are unit length (``normalize_embeddings=True``); texts longer than the model's
  ``max_seq_length`` tokens are cut by sentence-transformers.
- ``device`` and ``batch_size`` are passed through (default: the library's choice, 32).

Needs the ``embed-st`` extra (sentence-transformers, and so PyTorch):
``pip install 'afteraction[embed-st]'``. The default embedder needs neither.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from afteraction.embed.base import check_texts, count_setting
from afteraction.errors import ConfigError

__all__ = ["SentenceTransformersEmbedder"]

INSTALL_HINT = "pip install 'afteraction[embed-st]'"


class SentenceTransformersEmbedder:
    """A ``SentenceTransformer`` as an ``Embedder``; see the module docstring."""

    def __init__(
        self, name: str | None = None, *, model: Any = None, device: str | None = None, batch_size: int = 32
    ) -> None:
        if (name is None) == (model is None):
            raise ConfigError("SentenceTransformersEmbedder needs a model name or path, or model=, not both")
        batch_size = count_setting("SentenceTransformersEmbedder", "batch_size", batch_size)
        if model is None:
            if not isinstance(name, str) or not name.strip():
                raise ConfigError(f"SentenceTransformersEmbedder name must be a non-empty string, got {name!r}")
            try:
                library: Any = importlib.import_module("sentence_transformers")
            except ImportError as exc:
                raise ConfigError(f"the sentence-transformers embedder needs that package: {INSTALL_HINT}") from exc
            try:
                model = library.SentenceTransformer(name, device=device)
            except Exception as exc:
                raise ConfigError(f"sentence-transformers cannot load {name!r}: {exc}") from exc
        dimension = model.get_sentence_embedding_dimension()
        if not isinstance(dimension, int) or dimension < 1:
            raise ConfigError(f"the sentence-transformers model {name!r} has no fixed output dimension ({dimension!r})")
        label = name or getattr(getattr(model, "model_card_data", None), "base_model", None) or type(model).__name__
        self.model_id = f"st:{label}"
        self.dimension: int = dimension
        self.batch_size = batch_size
        self._model = model

    def __repr__(self) -> str:
        return f"SentenceTransformersEmbedder({self.model_id[3:]!r})"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in order."""
        batch = check_texts(texts)
        if not batch:
            return []
        vectors = self._model.encode(
            batch, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        rows: list[list[float]] = vectors.tolist()
        return rows
