"""Experiment (not shipped): glossary expansion of the texts the vector channel embeds.

A text that names a tool gets a generic description of it appended ("kafka: event streaming platform,
message broker, …", from ``glossary_terms.py``, written from general knowledge by someone who saw none
of the corpora), on the lesson's side (``--mode doc``), the query's (``query``) or both, so that a
request that describes a tool without naming it ("the streaming cluster") meets a lesson that names it.
Measured through the real hybrid search of ``bench_quality.py``:

    .venv/bin/python benchmarks/experiments/glossary_eval.py --mode doc \\
        --corpus benchmarks/quality_corpus.json --floor 0.355 --floor 0.3675

Results and the decision: ``benchmarks/experiments/README.md``.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from _sweep import sweep  # noqa: E402

import afteraction as aa  # noqa: E402
import afteraction.indexing as indexing  # noqa: E402
import afteraction.vector_channel as vc  # noqa: E402


def load_terms(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    spec = importlib.util.spec_from_file_location("glossary_terms", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TERMS, getattr(module, "CASED", {})


def _pattern(keys: Mapping[str, str], flags: int) -> re.Pattern[str] | None:
    if not keys:
        return None
    ordered = sorted(keys, key=len, reverse=True)  # the longest name first: "github actions" before "github"
    return re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, ordered)) + r")(?![\w-]|\.\w)", flags)


def expander(terms: dict[str, str], cased: dict[str, str], most: int) -> Callable[[str], str]:
    """``text`` with the descriptions of the first ``most`` tools it names appended, one line."""
    patterns = ((_pattern(terms, re.IGNORECASE), terms, True), (_pattern(cased, 0), cased, False))

    def expand(text: str) -> str:
        found = []
        for pattern, table, lower in patterns:
            if pattern is not None:
                for match in pattern.finditer(text):
                    key = match.group(1).lower() if lower else match.group(1)
                    found.append((match.start(), key, table[key]))
        seen: set[str] = set()
        glosses = []
        for _, key, gloss in sorted(found):
            if gloss not in seen:
                seen.add(gloss)
                glosses.append(f"{key}: {gloss}")
        return text + "\n" + "; ".join(glosses[:most]) if glosses else text

    return expand


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--terms", type=Path, default=HERE / "glossary_terms.py")
    parser.add_argument("--mode", choices=["none", "doc", "query", "both"], default="doc")
    parser.add_argument("--corpus", action="append", required=True)
    parser.add_argument("--floor", action="append", type=float, default=[], help="Weights.min_hybrid_relevance")
    parser.add_argument("--most", type=int, default=3, help="descriptions appended at most")
    parser.add_argument("--categories", action="store_true")
    args = parser.parse_args()
    expand = expander(*load_terms(args.terms), args.most)
    if args.mode in ("doc", "both"):
        lesson_text = indexing.embedding_text
        indexing.embedding_text = lambda experience: expand(lesson_text(experience))  # type: ignore[assignment]
    if args.mode in ("query", "both"):
        start = vc.VectorChannel.start

        def expanded_start(self: Any, scope: aa.Scope, text: str, **options: Any) -> Any:
            return start(self, scope, expand(text), **options)

        vc.VectorChannel.start = expanded_start  # type: ignore[method-assign]
    sweep(args.corpus, args.floor, f"mode={args.mode:5s}", embedder="minilm", categories=args.categories)


if __name__ == "__main__":
    main()
