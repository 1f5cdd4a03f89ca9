"""Experiment (not shipped): train a cross-encoder and score the dumped candidates with it.

The model reads a request and a lesson together (``[CLS] request [SEP] lesson [SEP]``, at most 160
tokens) through all-MiniLM-L6-v2's layers, and a linear head on the mean of the last layer gives
one score. It starts from MiniLM's weights (the head at random) and is trained on
``benchmarks/adapter_training/`` (the data of the shipped adapter; none of the quality corpora) with
binary cross-entropy: each request with its own lesson (1), four of the lesson's siblings (0: the
same system, another problem, which is what the fresh corpora's unanswerable requests reach) and
two lessons of other clusters (0); each unrelated request with four lessons (0). One epoch, AdamW
(lr 3e-5 for MiniLM, 1e-3 for the head), batches of 32, the rate warmed up over a tenth of the
steps then decayed to zero; seeded.

It needs PyTorch and transformers, which the project does not install (see
``finetune_minilm.py`` for the venv), and the candidates ``cross_encoder_eval.py dump`` wrote:

    /tmp/ft/bin/python benchmarks/experiments/cross_encoder_train.py --base DIR --data /tmp/ce

``DIR`` holds the fp32 all-MiniLM-L6-v2 (``config.json``, ``model.safetensors``). Writes
``scores.json`` (corpus → request → lesson → score) beside the candidates.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from finetune_minilm import TOK, load
from tokenizers import Tokenizer
from transformers import BertModel

TOP = 8  # as cross_encoder_eval.TOP
torch.set_num_threads(2)


class CrossEncoder(torch.nn.Module):
    def __init__(self, base: Path) -> None:
        super().__init__()
        self.bert = BertModel.from_pretrained(str(base), add_pooling_layer=False)
        self.head = torch.nn.Linear(self.bert.config.hidden_size, 1)
        self.tok = Tokenizer.from_file(str(TOK))
        self.tok.enable_truncation(160)
        self.tok.enable_padding()

    def forward(self, requests: list[str], lessons: list[str]) -> torch.Tensor:
        enc = self.tok.encode_batch(list(zip(requests, lessons, strict=True)))
        ids = torch.tensor([e.ids for e in enc])
        mask = torch.tensor([e.attention_mask for e in enc])
        types = torch.tensor([e.type_ids for e in enc])
        out = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
        m = mask.unsqueeze(-1).float()
        return self.head((out * m).sum(1) / m.sum(1).clamp(min=1e-9)).squeeze(-1)


def pairs(rng: random.Random) -> list[tuple[str, str, float]]:
    lessons, requests, unrelated = load()
    by_cluster: dict[str, list[dict[str, str]]] = {}
    for lesson in lessons:
        by_cluster.setdefault(lesson["cluster"], []).append(lesson)
    text_of = {lesson["id"]: lesson["text"] for lesson in lessons}
    out = []
    for request in requests:
        out.append((request["text"], text_of[request["lesson"]], 1.0))
        siblings = [x for x in by_cluster[request["cluster"]] if x["id"] != request["lesson"]]
        out += [(request["text"], x["text"], 0.0) for x in rng.sample(siblings, min(4, len(siblings)))]
        out += [(request["text"], x["text"], 0.0) for x in rng.sample(lessons, 2) if x["cluster"] != request["cluster"]]
    for text in unrelated:
        out += [(text, x["text"], 0.0) for x in rng.sample(lessons, 4)]
    rng.shuffle(out)
    return out


def train(model: CrossEncoder, data: list[tuple[str, str, float]], batch: int = 32) -> None:
    groups = [{"params": model.bert.parameters(), "lr": 3e-5}, {"params": model.head.parameters(), "lr": 1e-3}]
    opt = torch.optim.AdamW(groups, weight_decay=0.01)
    steps = (len(data) + batch - 1) // batch
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / max(1, steps // 10)) * max(0.0, 1 - s / steps)
    )
    model.train()
    start = time.time()
    for step, b in enumerate(range(0, len(data), batch)):
        chunk = data[b : b + batch]
        logits = model([c[0] for c in chunk], [c[1] for c in chunk])
        loss = F.binary_cross_entropy_with_logits(logits, torch.tensor([c[2] for c in chunk]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 50 == 0:
            print(f"step {step}/{steps} loss {loss.item():.3f} ({time.time() - start:.0f} s)", flush=True)


@torch.no_grad()
def score(model: CrossEncoder, requests: list[str], lessons: list[str], batch: int = 64) -> list[float]:
    model.eval()
    out: list[float] = []
    for i in range(0, len(requests), batch):
        out += model(requests[i : i + batch], lessons[i : i + batch]).tolist()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="the fp32 all-MiniLM-L6-v2 directory")
    parser.add_argument("--data", type=Path, default=Path("/tmp/ce"), help="where candidates.json is")
    args = parser.parse_args()
    torch.manual_seed(0)
    model = CrossEncoder(args.base)
    data = pairs(random.Random(0))
    print(len(data), "training pairs", flush=True)
    train(model, data)
    candidates = json.loads((args.data / "candidates.json").read_text())
    scores: dict[str, dict[str, dict[str, float]]] = {}
    for name, corpus in candidates.items():
        keys = [(row["id"], hit["id"]) for row in corpus["queries"] for hit in row["hits"][:TOP]]
        texts = {row["id"]: row["text"] for row in corpus["queries"]}
        found = score(model, [texts[q] for q, _ in keys], [corpus["lessons"][lesson] for _, lesson in keys])
        scores[name] = {}
        for (query, lesson), value in zip(keys, found, strict=True):
            scores[name].setdefault(query, {})[lesson] = value
        print(name, len(keys), "pairs scored", flush=True)
    (args.data / "scores.json").write_text(json.dumps(scores))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
