"""Step 4 (after the one evaluation; chooses nothing): is the z30 result a lucky w? For each w of the grid, the
threshold rule A (or B when A has none) picks t on the project corpus alone; then each corpus's no result + given a
block, beside the shipped rule. Also the project corpus's two folds by lesson (bench_quality.folds) at the chosen
z30/A setting.

    PYTHONPATH=src:benchmarks:benchmarks/experiments .venv/bin/python benchmarks/experiments/normalize_sensitivity.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from normalize_replay import CORPORA, PROJECT, ROOT_BENCH, load, longest_run, passing_runs, run

sys.path.insert(0, str(ROOT_BENCH))
import bench_quality as bq

DUMP = Path("/tmp/normalize/dump")


def main() -> None:
    data = {n: load(DUMP, n) for n in CORPORA}
    for fam in ("z30", "zall"):
        for w in (0.0, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.10):
            ts, res = passing_runs(data[PROJECT], fam, w)
            runs = longest_run(ts)
            how = "A"
            if not runs:
                how = "B"
                ok = [t for t, m in res.items() if m["block"] <= 0.10 and m["r1"] >= 0.9 and m["mrr"] >= 0.92]
                top = min((res[t]["none"], res[t]["block"]) for t in ok)
                runs = longest_run([t for t in ok if (res[t]["none"], res[t]["block"]) == top])
            t = float(np.round((runs[0] + runs[-1]) / 2 / 0.005) * 0.005)
            cells, misses = [], 0
            for n, qs in data.items():
                m = run(qs, fam, w, t)
                misses += m["misses"] if n != PROJECT else 0
                cells.append(f"{m['none']:5.1%}/{m['block']:5.1%}")
            print(f"{fam} w={w:.2f} t={t:.3f}({how},{len(runs)})  " + "  ".join(cells) + f"  held-out misses {misses}")
    qs = data[PROJECT]
    side = bq.folds(bq.load(ROOT_BENCH / "quality_corpus.json").queries)
    for label, fam, w, t in (("shipped", "shipped", 0.0, 0.355), ("z30/A", "z30", 0.06, 0.55)):
        for f in "AB":
            sub = [q for q in qs if side[q.id] == f]
            m = run(sub, fam, w, t)
            print(
                f"project fold {f} {label:8s} R@1 {m['r1']:.3f} MRR {m['mrr']:.3f} none {m['none']:5.1%} "
                f"block {m['block']:5.1%} misses {m['misses']}"
            )


if __name__ == "__main__":
    main()
