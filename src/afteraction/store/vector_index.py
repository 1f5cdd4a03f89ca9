"""In-process vector indexes for one (tenant, model) of the SQLite store, and their files.

- ``ExactIndex``: every vector in one float32 numpy matrix; a query is one matrix-vector
  product. Exact, and fast while small (about 1 ms at 10k vectors of 384 dimensions).
- ``AnnIndex``: a usearch HNSW graph (inner product over unit vectors, values kept as float16),
  for large collections. It is a cache of the ``vectors`` table, never the truth: it is saved
  beside the database as ``<db>-vectors/<tenant-hash>.<model-hash>.usearch`` with a JSON
  manifest (``.json``) naming the tenant, model, dimension, count, the ``seq`` watermark of the
  rows it holds, its size and sha256. ``IndexFiles.load`` trusts a file only when every one of
  those matches; the caller then checks it against SQLite (see ``sqlite_vectors``). usearch keeps a
  removed key's vector in the index and in the file it saves (the slot is only marked free), so an
  index that lost keys is never saved: its file is removed, and built again (``sqlite_delete``).

Both map keys (the record's ``pk``) to vectors and answer "the ``k`` nearest keys"; scores, scope
and eligibility are settled afterwards in SQL on exact float32 values.

numpy is imported by the callers' first search (the ``embed`` extra); usearch only when an ANN
index is built or loaded (also in the ``embed`` extra); without usearch the store stays exact.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from afteraction.errors import ConfigError
from afteraction.store import held_files

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float32]
    Keys = npt.NDArray[np.int64]

__all__ = [
    "AnnIndex",
    "ExactIndex",
    "IndexFiles",
    "IndexPolicy",
    "IndexState",
    "Manifest",
    "build_threads",
    "load_numpy",
    "usearch_available",
]

#: 2: never written from an index that held a deleted vector. A file of format 1 may hold some (in
#: the slots of removed keys): it is read only for a (tenant, model) that never lost a vector.
FORMAT = 2
READABLE = (1, 2)
#: HNSW parameters: graph degree, candidate list while building and while searching. On the
#: vector benchmark at 100k lessons (52k in the searched tenant), ef_search 64 / 96 / 128 / 192 / 256
#: gave recall@10 0.925 / 0.930 / 0.947 / 0.973 / 0.980 for about +1 ms from 96 to 192.
CONNECTIVITY = 16
EXPANSION_ADD = 64
EXPANSION_SEARCH = 192
DTYPE = "f16"


@dataclass(frozen=True, slots=True)
class IndexPolicy:
    """When a (tenant, model) moves from the exact matrix to an ANN index: at ``ann_from``
    vectors (measured in docs/vectors.md); a build of fewer than ``background_from`` runs inline,
    a larger one in the background, in a child process unless ``build_in_child`` is False
    (``ann_build``: a graph built in a thread of this process holds its GIL for seconds at a time)."""

    ann_from: int = 20_000
    background_from: int = 5_000
    build_in_child: bool = True


@dataclass(frozen=True, slots=True)
class IndexState:
    """What serves one (tenant, model): ``kind`` "exact" or "ann", over ``vectors`` vectors;
    ``built`` when this call built it; ``reason`` why a saved index was not used (if one was not)."""

    tenant: str
    model: str
    kind: str
    vectors: int
    built: bool
    reason: str


def load_numpy() -> Any:
    """numpy, or ConfigError naming the extra: vector search needs it."""
    try:
        import numpy
    except ImportError as exc:
        raise ConfigError(f"vector search needs numpy: pip install 'afteraction[embed]' ({exc})") from exc
    return numpy


def build_threads(vectors: int) -> int:
    """Every core for a large build; one for a small one, which then comes out the same every time."""
    return 0 if vectors >= 10_000 else 1


def usearch_available() -> bool:
    try:
        import usearch.index  # noqa: F401
    except ImportError:
        return False
    return True


class ExactIndex:
    """All vectors of one (tenant, model) in a growing float32 matrix."""

    kind = "exact"

    def __init__(self, dimension: int) -> None:
        self.np = load_numpy()
        self.dimension = dimension
        self._keys: Keys = self.np.zeros(0, dtype=self.np.int64)
        self._matrix: Floats = self.np.zeros((0, dimension), dtype=self.np.float32)
        self._rows: dict[int, int] = {}
        self._size = 0
        self._brute_force: Any = None
        if usearch_available():
            from usearch.index import search

            self._brute_force = search

    def __len__(self) -> int:
        return self._size

    def upsert(self, keys: Sequence[int], vectors: Floats) -> None:
        """Add or replace the vectors of ``keys`` (distinct keys, one row of ``vectors`` each)."""
        np = self.np
        positions: list[int] = []
        fresh: list[int] = []
        for i, key in enumerate(keys):
            row = self._rows.get(key)
            if row is None:
                self._rows[key] = self._size + len(fresh)
                positions.append(i)
                fresh.append(key)
            else:
                self._matrix[row] = vectors[i]
        if not fresh:
            return
        needed = self._size + len(fresh)
        if needed > len(self._matrix):
            capacity = max(needed, 2 * len(self._matrix), 1024)
            matrix = np.zeros((capacity, self.dimension), dtype=np.float32)
            matrix[: self._size] = self._matrix[: self._size]
            grown = np.zeros(capacity, dtype=np.int64)
            grown[: self._size] = self._keys[: self._size]
            self._matrix, self._keys = matrix, grown
        self._matrix[self._size : needed] = vectors[np.asarray(positions)]
        self._keys[self._size : needed] = fresh
        self._size = needed

    def remove(self, keys: Sequence[int]) -> None:
        """Drop the vectors of ``keys`` (absent keys are skipped): the last row moves into each gap."""
        for key in keys:
            row = self._rows.pop(key, None)
            if row is None:
                continue
            last = self._size - 1
            if row != last:
                moved = int(self._keys[last])
                self._matrix[row], self._keys[row] = self._matrix[last], moved
                self._rows[moved] = row
            self._size = last

    def nearest(self, query: Floats, k: int) -> list[int]:
        """The ``k`` keys with the highest dot product, best first. With usearch installed its
        single-threaded brute force does it: numpy's matrix-vector product goes through a
        multi-threaded BLAS that, on a busy machine, was 15x slower (36 ms against 2.2 ms at 10k)."""
        np = self.np
        if self._size == 0 or k <= 0:
            return []
        matrix = self._matrix[: self._size]
        if self._brute_force is not None:
            found = self._brute_force(matrix, query, min(k, self._size), "ip", exact=True, threads=1)
            return [int(key) for key in self._keys[np.asarray(found.keys, dtype=np.int64)]]
        scores = matrix @ query
        if k < self._size:
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
        else:
            top = np.argsort(-scores, kind="stable")
        return [int(key) for key in self._keys[top]]

    def contents(self) -> tuple[Keys, Floats]:
        """(keys, vectors): a copy of the keys; a view of the vectors, valid until the next ``upsert``."""
        return self._keys[: self._size].copy(), self._matrix[: self._size]


class AnnIndex:
    """A usearch HNSW index over unit vectors (inner product), float16 values."""

    kind = "ann"

    def __init__(self, dimension: int, index: Any | None = None) -> None:
        from usearch.index import Index

        self.np = load_numpy()
        self.dimension = dimension
        self.index = index or Index(
            ndim=dimension,
            metric="ip",
            dtype=DTYPE,
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )

    def __len__(self) -> int:
        return len(self.index)

    def upsert(self, keys: Sequence[int] | Keys, vectors: Floats, *, threads: int = 1) -> None:
        np = self.np
        listed = np.asarray(keys, dtype=np.uint64)
        if len(listed) == 0:
            return
        present = np.asarray(self.index.contains(listed), dtype=bool).reshape(-1)
        if present.any():
            self.index.remove(listed[present])
        self.index.add(listed, np.ascontiguousarray(vectors, dtype=np.float32), threads=threads)

    def remove(self, keys: Sequence[int]) -> None:
        """Drop the vectors of ``keys`` (absent keys are skipped)."""
        listed = self.np.asarray(keys, dtype=self.np.uint64)
        if len(listed):
            present = self.np.asarray(self.index.contains(listed), dtype=bool).reshape(-1)
            if present.any():
                self.index.remove(listed[present])

    def nearest(self, query: Floats, k: int) -> list[int]:
        if len(self) == 0 or k <= 0:
            return []
        found = self.index.search(query, min(k, len(self)))
        return [int(key) for key in found.keys]

    def vectors(self, keys: list[int]) -> Floats:
        """The stored (float16-rounded) vectors of ``keys``, as float32."""
        np = self.np
        got: Any = self.index.get(np.asarray(keys, dtype=np.uint64), dtype=np.float32)
        rows = [np.zeros(self.dimension, dtype=np.float32) if row is None else row for row in got]
        out: Floats = np.vstack(rows).astype(np.float32) if rows else np.zeros((0, self.dimension), np.float32)
        return out


@dataclass(frozen=True, slots=True)
class Manifest:
    """What an index file holds; written beside it, checked before it is loaded."""

    format: int
    tenant: str
    model: str
    dimension: int
    count: int
    watermark: int
    dtype: str
    bytes: int
    sha256: str


def _manifest(raw: object) -> Manifest:
    """The manifest ``raw`` (decoded JSON) holds; ValueError when a field is missing, extra or of another type."""
    if not isinstance(raw, dict):
        raise ValueError("not an object")
    manifest = Manifest(**raw)
    for spec in fields(Manifest):
        value = getattr(manifest, spec.name)
        wanted = int if spec.type in ("int", int) else str
        if type(value) is not wanted:
            raise ValueError(f"{spec.name} is {type(value).__name__}, not {wanted.__name__}")
    return manifest


class IndexFiles:
    """The index file and manifest of one (tenant, model) beside the database ``path``."""

    def __init__(self, database: Path, tenant: str, model: str) -> None:
        self.tenant = tenant
        self.model = model
        self.folder = _folder(database)
        stem = _stem(tenant, model)
        self.index_path = self.folder / f"{stem}{_INDEX}"
        self.manifest_path = self.folder / f"{stem}{_MANIFEST}"

    def manifest(self) -> Manifest | str:
        """The manifest, or why it cannot be used (missing, either file; unreadable; of another
        format, value type, model or tenant)."""
        if not self.manifest_path.exists() or not self.index_path.exists():
            return "missing"
        try:
            manifest = _manifest(json.loads(self.manifest_path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError, RecursionError) as exc:
            return f"unreadable manifest ({exc})"
        if manifest.format not in READABLE or manifest.dtype != DTYPE:
            return f"format {manifest.format}/{manifest.dtype}, not {FORMAT}/{DTYPE}"
        if manifest.tenant != self.tenant or manifest.model != self.model:
            return f"of another tenant or model ({manifest.model!r})"
        return manifest

    def load(self, dimension: int) -> tuple[AnnIndex, Manifest] | str:
        """The index and its manifest, or why they cannot be used (see ``manifest``; of another
        dimension, or not the file the manifest describes)."""
        manifest = self.manifest()
        if isinstance(manifest, str):
            return manifest
        if manifest.dimension != dimension:
            return f"of dimension {manifest.dimension}, not {dimension}"
        try:
            data = self.index_path.read_bytes()
        except OSError as exc:
            return f"unreadable index file ({exc})"
        if len(data) != manifest.bytes or hashlib.sha256(data).hexdigest() != manifest.sha256:
            return "index file differs from its manifest (truncated or changed)"
        from usearch.index import Index

        try:
            index = Index.restore(data, view=False)
        except Exception as exc:  # usearch raises plain RuntimeError/ValueError on bad files
            return f"usearch cannot read it ({exc})"
        if index is None or index.ndim != dimension or len(index) != manifest.count:
            return "index contents differ from its manifest"
        index.expansion_search = EXPANSION_SEARCH  # type: ignore[misc]  # a setter usearch's stubs miss
        return AnnIndex(dimension, index), manifest

    def save(self, ann: AnnIndex, watermark: int) -> Manifest:
        """Write the index, then its manifest, each through a temporary file and a rename (``held_files.replace``),
        after removing the temporary files beside them that no live process writes (left by a save killed)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        held_files.sweep_temporaries(self.folder, [_temporary(f"*{suffix}", "*") for suffix in (_INDEX, _MANIFEST)])
        saved: Any = ann.index.save()
        data = bytes(saved)
        manifest = Manifest(
            FORMAT, self.tenant, self.model, ann.dimension, len(ann), watermark, DTYPE, len(data),
            hashlib.sha256(data).hexdigest(),
        )  # fmt: skip
        held_files.replace(self.index_path, data)
        held_files.replace(self.manifest_path, json.dumps(asdict(manifest), indent=1).encode())
        return manifest

    def remove(self) -> None:
        """Remove the files, and what a save cut short (a kill during it) left beside them."""
        for path in (self.manifest_path, self.index_path):
            for left in self.folder.glob(_temporary(path.name, "*")):
                left.unlink(missing_ok=True)
            path.unlink(missing_ok=True)

    @staticmethod
    def remove_model(database: Path, model: str, tenant: str | None = None) -> list[Path]:
        """Remove the files of ``model``'s indexes beside ``database`` (of ``tenant``, or of every
        tenant), temporary ones left by a save cut short included, and the build folders there of
        processes that ended (a host killed during a build left a graph of every vector in one; a
        live build's graph is never saved after a delete: ``sqlite_vectors``); the paths removed.
        OSError when one cannot be removed."""
        stem, folder = _stem(tenant, model), _folder(database)
        removed = []
        for name in (f"{stem}{_INDEX}", f"{stem}{_MANIFEST}"):
            for path in [*folder.glob(name), *folder.glob(_temporary(name, "*"))]:
                path.unlink(missing_ok=True)
                removed.append(path)
        return [*removed, *held_files.sweep_builds(folder, strict=True)]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


_INDEX, _MANIFEST = ".usearch", ".json"


def _folder(database: Path) -> Path:
    """Where the index files of the database ``database`` live."""
    return database.with_name(database.name + "-vectors")


def _stem(tenant: str | None, model: str) -> str:
    """The file name of (``tenant``, ``model``)'s index, before its suffix; with ``tenant`` None,
    a glob pattern over every tenant's."""
    return f"{'*' if tenant is None else _digest(tenant)}.{_digest(model)}"


_temporary = held_files.temporary  # the name a file is written under before its rename
