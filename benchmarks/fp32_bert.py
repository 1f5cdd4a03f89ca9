"""all-MiniLM-L6-v2 in fp32 as a plain numpy BERT forward pass: the reference of ``bench_embed.py --reference``."""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class Fp32Bert:
    """all-MiniLM-L6-v2 in fp32: a BERT forward pass in numpy from ``model.safetensors``, mean-pooled."""

    def __init__(self, path: Path) -> None:
        import numpy as np

        raw = path.read_bytes()
        (size,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8 : 8 + size])
        body = memoryview(raw)[8 + size :]
        self.w: dict[str, Any] = {}
        for name, info in header.items():
            if name != "__metadata__" and info["dtype"] == "F32":
                start, end = info["data_offsets"]
                self.w[name] = np.frombuffer(body[start:end], dtype=np.float32).reshape(info["shape"])
        self.layers = 1 + max(int(n.split(".")[2]) for n in self.w if n.startswith("encoder.layer."))

    def _norm(self, x: Any, prefix: str) -> Any:
        import numpy as np

        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    def _dense(self, x: Any, prefix: str) -> Any:
        return x @ self.w[prefix + ".weight"].T + self.w[prefix + ".bias"]

    def embed(self, ids: Sequence[int]) -> list[float]:
        import numpy as np

        w, n, heads = self.w, len(ids), 12
        x = w["embeddings.word_embeddings.weight"][list(ids)] + w["embeddings.position_embeddings.weight"][:n]
        x = self._norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (self._dense(x, p + f"attention.self.{t}").reshape(n, heads, -1).transpose(1, 0, 2)
                       for t in ("query", "key", "value"))  # fmt: skip
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            context = ((scores / scores.sum(-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(n, -1)
            x = self._norm(x + self._dense(context, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            h = self._dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))  # exact GELU, as BERT uses
            x = self._norm(x + self._dense(h, p + "output.dense"), p + "output.LayerNorm")
        pooled = x.mean(0)
        unit: list[float] = (pooled / np.linalg.norm(pooled)).tolist()
        return unit


def _erf(x: Any) -> Any:
    """erf in numpy (Abramowitz & Stegun 7.1.26, error < 1.5e-7): numpy has none."""
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))
