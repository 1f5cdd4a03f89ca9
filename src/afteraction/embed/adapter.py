"""A learned linear map on an embedder's vectors: how the default embedder tells a lesson from its neighbours.

all-MiniLM-L6-v2 scores a request and the lesson that answers it in other words about as high as a
request and a close neighbour that does not answer it (another problem of the same system). The
adapter is one ``dimension × dimension`` matrix ``W``, trained for MiniLM on lessons and requests
written for the purpose (``benchmarks/train_adapter.py``): every vector ``v``, a query's and a lesson's
alike, becomes ``W v`` scaled to unit length. Its name joins the model id
(``all-MiniLM-L6-v2-onnx-int8-dynamic+lessons-v1``), so adapted vectors are never compared with the
base model's: a store indexed without it is indexed again.

The matrix ships in this package (``data/lessons-v1.npy``, float32, 590 kB) and is checked against
its sha256 before use; a file that does not match is refused (``ConfigError``), never loaded.
Measured effect in ``docs/retrieval.md``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from afteraction.embed.base import Embedder
from afteraction.embed.files import sha256_of
from afteraction.errors import ConfigError, EmbedderError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["ADAPTER_NAME", "ADAPTER_PATH", "ADAPTER_SHA256", "Adapted", "load_matrix"]

ADAPTER_NAME = "lessons-v1"
ADAPTER_PATH = Path(__file__).resolve().parent / "data" / f"{ADAPTER_NAME}.npy"
ADAPTER_SHA256 = "4d7ce04b5d44347003634a980e40917c44c30bcffd79318f20a9068fd33ef15e"


def load_matrix(path: Path, sha256: str, dimension: int) -> npt.NDArray[np.float32]:
    """The ``dimension × dimension`` float32 matrix at ``path``, whose file must hash to ``sha256``."""
    import numpy as np

    try:
        actual = sha256_of(path)
    except OSError as exc:
        raise ConfigError(f"the embedding adapter {path} cannot be read: {exc}") from None
    if actual != sha256:
        raise ConfigError(f"the embedding adapter {path} has sha256 {actual}, expected {sha256}: reinstall afteraction")
    matrix: npt.NDArray[np.float32] = np.load(path, allow_pickle=False)
    if matrix.dtype != np.float32 or matrix.shape != (dimension, dimension) or not np.isfinite(matrix).all():
        raise ConfigError(f"the embedding adapter {path} is not a finite {dimension}×{dimension} float32 matrix")
    return matrix


class Adapted:
    """``inner``'s vectors through the matrix of ``name`` (by default the shipped ``lessons-v1``).

    ``model_id`` is ``inner.model_id + "+" + name`` (reading it reads the inner one, which may settle a
    variant, as ``MiniLM``'s does); ``dimension`` is the inner one. The matrix is loaded and checked on
    the first ``embed`` (or ``load()``), once, under a lock; a bad file is a ``ConfigError`` there and
    every time after. Thread-safe.
    """

    def __init__(
        self,
        inner: Embedder,
        *,
        name: str = ADAPTER_NAME,
        path: Path = ADAPTER_PATH,
        sha256: str = ADAPTER_SHA256,
    ) -> None:
        self.inner = inner
        self.name = name
        self.path = path
        self.sha256 = sha256
        self._lock = threading.Lock()
        self._matrix: Any = None
        self._failed: ConfigError | None = None

    def __repr__(self) -> str:
        return f"Adapted({self.inner!r}, name={self.name!r})"

    @property
    def model_id(self) -> str:
        return f"{self.inner.model_id}+{self.name}"

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def load(self) -> None:
        """Load and check the matrix now (the inner embedder loads on its own first call)."""
        self._transposed()

    def _transposed(self) -> npt.NDArray[np.float32]:
        with self._lock:
            if self._failed is not None:
                raise self._failed
            if self._matrix is None:
                try:
                    self._matrix = load_matrix(self.path, self.sha256, self.inner.dimension).T.copy()
                except ConfigError as exc:
                    self._failed = exc
                    raise
            matrix: npt.NDArray[np.float32] = self._matrix
            return matrix

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The inner embedder's vectors of ``texts``, mapped and scaled to unit length."""
        import numpy as np

        transposed = self._transposed()
        if not texts:
            return []
        embed_array = getattr(self.inner, "embed_array", None)
        raw = embed_array(texts) if callable(embed_array) else self.inner.embed(texts)
        vectors = np.asarray(raw, dtype=np.float32).reshape(len(texts), -1)
        if vectors.shape[1] != transposed.shape[0]:
            raise EmbedderError(
                f"embedder {self.model_id!r}: the inner model gave {vectors.shape[1]} dimensions, the adapter "
                f"takes {transposed.shape[0]}"
            )
        # One row at a time: a matrix product of many rows starts OpenBLAS's worker threads, which then
        # spin beside onnxruntime's and cost indexing ~30% more CPU per lesson (measured on 2 cores); a
        # row's product stays on the caller's thread (~10 µs).
        mapped = np.stack([row @ transposed for row in vectors])
        norms = np.linalg.norm(mapped, axis=1, keepdims=True)
        mapped /= np.where(norms > 0, norms, 1.0)
        out: list[list[float]] = mapped.tolist()
        return out
