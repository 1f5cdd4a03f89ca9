"""Experiment (not shipped): the retrieval quality of a candidate ONNX BERT (mean-pooled, MiniLM's tokenizer)
as the vector channel's embedder, through the real hybrid search of ``bench_quality.py``:

    .venv/bin/python benchmarks/experiments/onnx_eval.py --model /tmp/m1.onnx \\
        --corpus benchmarks/quality_corpus.json --floor 0.355 --floor 0.37

Made for ``finetune_minilm.py``'s output; results and the decision: ``benchmarks/experiments/README.md``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import bench_quality as bq  # noqa: E402
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from _sweep import sweep  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

from afteraction.embed.minilm import MAX_TOKENS, TOKENIZER_PATH  # noqa: E402


class OnnxBert:
    """One text per model call (as the shipped default runs), mean-pooled and normalized."""

    dimension = 384

    def __init__(self, path: Path) -> None:
        self.model_id = f"candidate-{path.stem}"
        options = ort.SessionOptions()
        options.intra_op_num_threads = 2
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.no_padding()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = []
        for text in texts:
            ids = np.array([self.tokenizer.encode(text).ids], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
            (hidden,) = self.session.run(None, feeds)
            pooled = hidden[0].mean(axis=0)
            vectors.append((pooled / np.linalg.norm(pooled)).astype(np.float32).tolist())
        return vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--corpus", action="append", required=True)
    parser.add_argument("--floor", action="append", type=float, default=[], help="Weights.min_hybrid_relevance")
    parser.add_argument("--categories", action="store_true")
    args = parser.parse_args()
    embedder = OnnxBert(args.model)

    def build(name: str) -> Any:
        return embedder

    bq.build_embedder = build
    sweep(args.corpus, args.floor, args.model.stem, embedder="candidate", categories=args.categories)


if __name__ == "__main__":
    main()
