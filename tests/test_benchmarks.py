"""The benchmarks must not rot: each runs end to end at a tiny size and prints its table."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=BENCHMARKS.parent, capture_output=True, text=True, timeout=timeout, check=False
    )


def _corpus() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_corpus", BENCHMARKS / "corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_run_all_smoke_prints_every_table() -> None:
    done = _run(
        "benchmarks/run_all.py", "--smoke", timeout=400
    )  # nine scripts, each a few seconds; the machine is shared
    assert done.returncode == 0, done.stdout + done.stderr
    for script in sorted(BENCHMARKS.glob("bench_*.py")):
        assert f"== {script.name}: ok" in done.stdout
    assert "search p50 ms" in done.stdout
    assert "capture µs/call" in done.stdout
    assert "     200 |" in done.stdout or "    200 |" in done.stdout


def test_bench_loop_json_has_every_measurement(tmp_path: Path) -> None:
    done = _run(
        "benchmarks/bench_loop.py",
        *("--sizes", "200", "--queries", "20", "--repeat", "2", "--runs", "20", "--batch", "50"),
        *("--capture-runs", "5", "--data-dir", str(tmp_path), "--json"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["facts"]["cores"] >= 1
    (result,) = report["results"]
    assert result["lessons"] == 200
    assert result["cache"] == "built"
    assert list(tmp_path.glob("loop-*-n200-*.db"))
    for name in ("search_p50_ms", "search_p95_ms", "block_p50_ms", "render_p50_ms", "capture_p50_us"):
        assert result[name] > 0, name
    assert result["search_p50_ms"] <= result["search_p95_ms"]
    for name in ("finish_per_s", "bulk_per_s"):
        assert result[name] > 0, name
    assert result["visible"] > 0
    assert result["errors"] == []


def test_corpus_is_deterministic_and_varied() -> None:
    corpus = _corpus()
    first = [corpus.case(i) for i in range(300)]
    assert first == list(corpus.cases(300))
    assert corpus.case(299) == first[299]  # case i does not depend on how many are asked for
    assert corpus.queries(50) == corpus.queries(50)
    assert len(corpus.TOPICS) >= 40
    assert len(corpus.vocabulary()) >= 3000
    assert len({c.scope.tenant for c in first}) >= 4
    statuses = {c.status.value for c in first}
    assert {"validated", "quarantined", "revoked"} <= statuses
    experience = corpus.experience(first[0])
    assert experience.task == first[0].task
    assert experience.scope == first[0].scope


@pytest.mark.parametrize("flag", ["--repeat=1", "--sizes=0"])
def test_bench_loop_refuses_bad_flags(flag: str) -> None:
    done = _run("benchmarks/bench_loop.py", flag)
    assert done.returncode == 2
    assert "error" in done.stderr
