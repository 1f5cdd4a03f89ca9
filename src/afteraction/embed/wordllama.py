"""An optional static embedder: WordLlama's bundled ``l2_supercat`` model (256 dimensions), offline.

WordLlama (MIT) averages per-token vectors taken from a large language model's embedding layer:
no neural network runs, so it embeds thousands of texts a second on one core and loads ~130 MB.
Its retrieval quality on this project's corpus is below MiniLM's (``docs/embedders.md`` has the
numbers); pick it where indexing speed matters more than paraphrase recall.

- **Files**: the weights (``l2_supercat_256.safetensors``) and the tokenizer ship inside the
  ``wordllama`` wheel. ``WordLlama.load`` is called with downloads disabled and with the package's
  own directory as its ``cache_dir`` (where the tokenizer sits), so nothing is fetched or written.
- **Dimensions**: 256, or a Matryoshka prefix of 64 or 128 (``dim=``); the model id names it.
- **Long texts**: cut at ``MAX_CHARS`` characters (the model has no token limit; this bounds work).
  An empty text is embedded as a single space (it has no token, and so no mean).

Needs the ``embed-wordllama`` extra: ``pip install 'afteraction[embed-wordllama]'``.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from afteraction.embed.base import check_texts
from afteraction.errors import ConfigError

__all__ = ["DIMENSIONS", "MAX_CHARS", "WordLlama"]

INSTALL_HINT = "pip install 'afteraction[embed-wordllama]'"
CONFIG = "l2_supercat"
DIMENSIONS = (64, 128, 256)
MAX_CHARS = 12_800


class WordLlama:
    """WordLlama ``l2_supercat`` as an ``Embedder``; ``dim`` is 64, 128 or 256 (default)."""

    dimension: int

    def __init__(self, *, dim: int = 256) -> None:
        if dim not in DIMENSIONS or isinstance(dim, bool):
            raise ConfigError(f"WordLlama dim must be one of {DIMENSIONS}, got {dim!r}")
        try:
            package: Any = importlib.import_module("wordllama")
        except ImportError as exc:
            raise ConfigError(f"the WordLlama embedder needs the wordllama package: {INSTALL_HINT}") from exc
        home = Path(str(package.__file__)).parent
        try:
            self._model: Any = package.WordLlama.load(
                config=CONFIG, dim=256, trunc_dim=None if dim == 256 else dim, cache_dir=home, disable_download=True
            )
        except Exception as exc:
            raise ConfigError(f"cannot load WordLlama {CONFIG!r} from {home}: {exc}; reinstall wordllama") from exc
        self.dimension = dim
        self.model_id = f"wordllama-{CONFIG}-{dim}"
        self._lock = threading.Lock()  # its tokenizer's padding settings are shared state

    def __repr__(self) -> str:
        return f"WordLlama(dim={self.dimension})"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in order."""
        batch = [text[:MAX_CHARS] or " " for text in check_texts(texts)]  # "" has no token: NaN
        if not batch:
            return []
        with self._lock:
            vectors = self._model.embed(batch, norm=True)
        rows: list[list[float]] = vectors.tolist()
        return rows
