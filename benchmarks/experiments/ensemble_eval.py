"""Would averaging MiniLM's cosine with WordLlama's find more paraphrases? (A diagnosis, no floor.)

For each corpus and category, the share of queries whose right lesson has the highest cosine among
the lessons of the query's tenant, by the default embedder (MiniLM + adapter), by WordLlama (the
``embed-wordllama`` extra) and by their weighted mean. Vectors only: no text channel, no floor.

    .venv/bin/python benchmarks/experiments/ensemble_eval.py benchmarks/quality_corpus.json ...
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from afteraction.core.text import embedding_text
from afteraction.embed import default_embedder
from afteraction.embed.wordllama import WordLlama
from afteraction.model import Experience

CATEGORIES = ("paraphrase", "realistic", "distractor")
MIXES = (("minilm", 1.0), ("wordllama", 0.0), ("mean .7/.3", 0.7), ("mean .5/.5", 0.5))


def unit(embedder: Any, texts: Sequence[str]) -> Any:
    vectors = np.array(embedder.embed(list(texts)), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def main(paths: Sequence[str]) -> None:
    minilm, wordllama = default_embedder(), WordLlama()
    for path in paths:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        lessons = [Experience.from_dict(item) for item in data["lessons"]]
        ids = [lesson.id for lesson in lessons]
        texts = [embedding_text(lesson) for lesson in lessons]
        for category in CATEGORIES:
            queries = [q for q in data["queries"] if q["category"] == category and q["answers"]]
            targets = np.array([ids.index(q["answers"][0]) for q in queries])
            seen = np.array([[lesson.scope.tenant == q["scope"]["tenant"] for lesson in lessons] for q in queries])
            asked = [q["query"] for q in queries]
            first = unit(minilm, asked) @ unit(minilm, texts).T
            second = unit(wordllama, asked) @ unit(wordllama, texts).T
            cells = []
            for name, share in MIXES:
                scores = np.where(seen, share * first + (1 - share) * second, -9.0)
                cells.append(f"{name} {np.mean(scores.argmax(axis=1) == targets):.2f}")
            print(f"{path.rsplit('/', 1)[-1]:22s} {category:11s} {len(queries):3d}  " + " | ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1:])
