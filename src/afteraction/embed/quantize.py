"""The re-quantized MiniLM: int8 compute, derived from the shipped model once per machine, cached.

The shipped ``model.onnx`` stores int8 weights, but as ``Cast`` + ``Mul`` chains that onnxruntime
folds into float32 at load: every ``MatMul`` then runs in float32 (62% of the time, profiled).
``build`` folds the ``MatMul`` weights back to float32 and re-quantizes them with onnxruntime's
``quantize_dynamic`` (int8 weights **per output channel**, activations quantized per call), so the
products run as ``MatMulInteger``. The token and position embeddings stay as shipped. Per-tensor
weights are not used: their vectors drift to cosine ~0.86 of the shipped model's.

The derived file lives in ``cache_dir()`` (``$AFTERACTION_CACHE_DIR``, else
``$XDG_CACHE_HOME/afteraction``, else ``~/.cache/afteraction``), under ``minilm/``, named by the
source model's sha256, the onnxruntime version, the recipe and **its own sha256**:
``all-MiniLM-L6-v2.src-<16 hex>.ort-<version>.<recipe>.sha256-<64 hex>.onnx``. It is written to a
temporary file in the same directory, fsynced and renamed into place (then the directory is
fsynced), so a reader sees a whole file or none. A file whose content does not hash to its name
(truncated, damaged, replaced) is deleted and built again, never loaded. Two processes building at
once each rename a whole file; the build is deterministic, so they write the same name.

``prepare`` never raises: when ``onnx`` is missing, the directory is not writable or the build
fails, it logs why once (logger ``afteraction.embed``) and returns None, and MiniLM falls back to
the shipped model (under the shipped model's id: vectors of the two are never compared).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import logging
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["RECIPE", "build", "cache_dir", "cached_name", "prepare"]

log = logging.getLogger("afteraction.embed")

#: Names the recipe below; a change of recipe is a new file (and should be a new model id).
RECIPE = "dynpc1"
#: A temporary file older than this is a crashed build's: removed when the cache is read.
STALE_TMP_SECONDS = 3600.0

_LOCK = threading.Lock()  # one build at a time in a process
_SAID: set[str] = set()  # fallback reasons already logged


def cache_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Where derived models are kept: ``explicit``, ``$AFTERACTION_CACHE_DIR``,
    ``$XDG_CACHE_HOME/afteraction`` or ``~/.cache/afteraction``."""
    if explicit is not None:
        return Path(explicit)
    configured = os.environ.get("AFTERACTION_CACHE_DIR", "").strip()
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "afteraction"


def _ort_version() -> str:
    from importlib.metadata import version

    return version("onnxruntime")


def cached_name(source_sha256: str, sha256: str | None = None) -> str:
    """The derived file's name; with ``sha256=None`` the prefix every build of it shares."""
    stem = f"all-MiniLM-L6-v2.src-{source_sha256[:16]}.ort-{_ort_version()}.{RECIPE}.sha256-"
    return stem if sha256 is None else f"{stem}{sha256}.onnx"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _say_once(reason: str) -> None:
    if reason not in _SAID:
        _SAID.add(reason)
        log.warning("afteraction: using the shipped MiniLM model, not the re-quantized one: %s", reason)


def _dequantize_matmul_weights(model: Any) -> int:
    """Replace each ``int8 initializer -> Cast -> Mul(scale) -> MatMul`` weight by its float32
    value; the number replaced. Other Cast/Mul chains (the embeddings' ``Gather``) stay."""
    from onnx import numpy_helper

    graph = model.graph
    inits = {init.name: init for init in graph.initializer}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    dropped_nodes: list[Any] = []
    dropped_inits: set[str] = set()
    added = []
    for cast in graph.node:
        if cast.op_type != "Cast" or cast.input[0] not in inits:
            continue
        users = consumers.get(cast.output[0], [])
        if len(users) != 1 or users[0].op_type != "Mul":
            continue
        mul = users[0]
        scale_name = next((name for name in mul.input if name != cast.output[0]), None)
        if scale_name is None or scale_name not in inits:
            continue
        if not all(user.op_type == "MatMul" for user in consumers.get(mul.output[0], [])):
            continue
        weight = numpy_helper.to_array(inits[cast.input[0]]).astype("float32")
        scale = numpy_helper.to_array(inits[scale_name]).astype("float32")
        added.append(numpy_helper.from_array((weight * scale).astype("float32"), mul.output[0]))
        dropped_nodes += [cast, mul]
        dropped_inits.update((cast.input[0], scale_name))
    for node in dropped_nodes:
        graph.node.remove(node)
    still_used = {name for node in graph.node for name in node.input}
    for init in [init for init in graph.initializer if init.name in dropped_inits - still_used]:
        graph.initializer.remove(init)
    graph.initializer.extend(added)
    return len(added)


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    """onnxruntime's quantizer calls ``logging.warning`` (advice to pre-process the model), which
    would configure the root logger of an application that has not, and write to its logs: its
    records are dropped while it runs, and a handler keeps the root logger from being set up."""
    root = logging.getLogger()
    handler = logging.NullHandler()

    def keep(record: logging.LogRecord) -> bool:
        return "onnxruntime" not in record.pathname

    root.addHandler(handler)
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)
        root.removeHandler(handler)


def build(source: Path, directory: Path, source_sha256: str) -> Path:
    """Derive the re-quantized model from ``source`` into ``directory``, atomically; its path.
    Raises whatever goes wrong (``prepare`` turns that into a fallback)."""
    onnx: Any = importlib.import_module("onnx")
    quantization: Any = importlib.import_module("onnxruntime.quantization")

    data = source.read_bytes()
    if _digest(data) != source_sha256:
        raise ValueError(f"{source} does not have the shipped model's sha256")
    model = onnx.load_from_string(data)
    if _dequantize_matmul_weights(model) == 0:
        raise ValueError(f"{source} has no int8 MatMul weights to re-quantize")
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=".build-", suffix=".onnx.tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with _quiet_root_logger():
            quantization.quantize_dynamic(
                model,
                tmp,
                per_channel=True,
                weight_type=quantization.QuantType.QInt8,
                op_types_to_quantize=["MatMul"],
            )
        built = tmp.read_bytes()
        with tmp.open("rb+") as file:
            os.fsync(file.fileno())
        target = directory / cached_name(source_sha256, _digest(built))
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:  # a platform without directory fds: the rename is what matters
        return target
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return target


def _verified(directory: Path, source_sha256: str) -> Path | None:
    """A cached derived model whose content hashes to its name; others are deleted."""
    prefix = cached_name(source_sha256)
    now = time.time()
    for path in sorted(directory.glob(".build-*.onnx.tmp")):
        try:
            if now - path.stat().st_mtime > STALE_TMP_SECONDS:
                path.unlink()
        except OSError:
            pass
    for path in sorted(directory.glob(f"{prefix}*.onnx")):
        expected = path.name[len(prefix) : -len(".onnx")]
        try:
            if _digest(path.read_bytes()) == expected:
                return path
            log.warning("afteraction: the cached model %s is damaged (sha256 differs): building it again", path)
            path.unlink()
        except OSError as exc:
            log.warning("afteraction: cannot read the cached model %s: %s", path, exc)
    return None


def prepare(source: Path, source_sha256: str, directory: Path) -> Path | None:
    """The re-quantized model's path, built into ``directory`` if no whole copy is there; None
    (logged once per reason) when it cannot be had: then use the shipped model."""
    if importlib.util.find_spec("onnx") is None:
        _say_once("the onnx package is missing (pip install 'afteraction[embed]')")
        return None
    with _LOCK:
        try:
            found = _verified(directory / "minilm", source_sha256) if (directory / "minilm").is_dir() else None
            if found is not None:
                return found
            started = time.perf_counter()
            path = build(source, directory / "minilm", source_sha256)
            log.info("afteraction: re-quantized MiniLM into %s in %.1f s", path, time.perf_counter() - started)
            return path
        except Exception as exc:  # any failure: fall back, never fail
            _say_once(f"building it into {directory / 'minilm'} failed: {type(exc).__name__}: {exc}")
            return None
