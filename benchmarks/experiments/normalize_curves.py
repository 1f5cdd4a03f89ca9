"""Step 3 (a diagnosis, run after the one evaluation; chooses nothing): at equal blocks, does a rule leave fewer
answerable requests with nothing than the shipped blend? For each corpus and rule (its lam / w as chosen on the
project corpus, or fixed a priori), the fewest answerable-with-no-result over every threshold whose given-a-block rate
is at most B, for B in 5/10/15/20%. The threshold here is picked per corpus (an oracle): it compares the rules'
trade-off curves, not settings one could ship.

    PYTHONPATH=src:benchmarks:benchmarks/experiments .venv/bin/python benchmarks/experiments/normalize_curves.py
"""

from __future__ import annotations

from pathlib import Path

from normalize_replay import CORPORA, T_GRID, auc, load, run

RULES = [
    ("shipped", "shipped", 0.0),
    ("z30 w=.06 (chosen)", "z30", 0.06),
    ("zall w=.07 (chosen)", "zall", 0.07),
    ("rd3 lam=.4 (chosen)", "rd3", 0.4),
    ("rq5 lam=.7 (chosen)", "rq5", 0.7),
    ("csls5 lam=1 (pure CSLS)", "csls5", 1.0),
    ("kth2 lam=.5 (a priori)", "kth2", 0.5),
    ("mean30 lam=.5 (a priori)", "mean30", 0.5),
]
BUDGETS = (0.05, 0.10, 0.15, 0.20)


def main() -> None:
    dump = Path("/tmp/normalize/dump")
    print(
        "fewest answerable with no result at given-a-block <= 5% / 10% / 15% / 20% (oracle threshold per corpus);"
        " AUC of the best candidate's score, answerable vs not"
    )
    for name in CORPORA:
        qs = load(dump, name)
        print(f"== {name}")
        for label, fam, p in RULES:
            res = [run(qs, fam, p, float(t)) for t in T_GRID]
            cells = []
            for b in BUDGETS:
                ok = [m["none"] for m in res if m["block"] <= b + 1e-9]
                cells.append(f"{min(ok):6.1%}" if ok else "   n/a")
            print(f"  {label:26s} {' '.join(cells)}   AUC {auc(qs, fam, p):.3f}")


if __name__ == "__main__":
    main()
