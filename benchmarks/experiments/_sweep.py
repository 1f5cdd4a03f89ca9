"""The loop both experiments run: each corpus through ``bench_quality.run`` at each floor, one line each."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import bench_quality as bq

import afteraction as aa


def sweep(corpora: Sequence[str], floors: Sequence[float], label: str, *, embedder: str, categories: bool) -> None:
    """R@1 (all), MRR (answerable), answerable with no result and unanswerable given a block, per
    corpus and ``Weights.min_hybrid_relevance`` (the default's when ``floors`` is empty)."""
    for path in corpora:
        corpus = bq.load(Path(path))
        for floor in floors or [aa.Weights().min_hybrid_relevance]:
            weights = replace(aa.Weights(), min_hybrid_relevance=floor)
            outcomes, errors, _, _ = bq.run(corpus, corpus.queries, "sqlite", weights=weights, embedder=embedder)
            rows = {row.name: row for row in bq.rows(outcomes)}
            every, answerable = rows["all"], rows["answerable"]
            print(
                f"{Path(path).stem:18s} {label} floor={floor:.4f}  R@1 {every.r1:.3f}  "
                f"MRR {answerable.mrr:.3f}  no result {answerable.no_result:.1%}  "
                f"given a block {every.given_block:.1%}  errors {len(errors)}",
                flush=True,
            )
            if categories:
                for row in bq.rows(outcomes):
                    print(f"    {row.name:15s} R@1 {row.r1:.2f}  no result {row.no_result}  block {row.given_block}")
