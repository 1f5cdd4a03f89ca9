"""How the learning loop behaves over many runs: what a block shows, and which lessons get buried.

Two parts, both behind decisions of 2026-11-30 (docs/retrieval.md, "Copies of one fix are shown
once" and "Only a run that applied the lesson is evidence about it"):

- ``--runs N`` (the real path): an in-memory ``Memory``, four task families (each a fix of two
  tools), ``N`` runs with random tickets. A run takes its block through ``run.reference_block()``,
  applies its family's fix at once when the block shows it (else fails once first), and fails
  its checks at ``--failures`` for other reasons. Then each family's block: how many records it
  shows, of how many hits, and the shown lesson's status, confidence and count of copies.
- ``--walks N`` (arithmetic, not the product's code): a lesson that starts at one support and gets
  outcomes that fail at rate f; the share ever Contested (contradictions above supports: the
  shipped rule), and under a Beta-posterior rule (Contested when P(success < 0.5) > 0.9), with
  the median number of outcomes it took. For good lessons that share is the harm; for bad ones
  the speed.

    .venv/bin/python benchmarks/experiments/loop_dynamics.py --runs 120 --walks 20000
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections import Counter
from collections.abc import Callable
from functools import cache
from math import comb

import afteraction as aa
from afteraction.testing import FixedClock

SCOPE = aa.Scope(tenant="acme", app="ops", project="infra")
#: family: (its requests, the tools of its fix, the error of a first attempt without it)
FAMILIES = {
    "deploy": (
        ("Deploys to staging time out", "staging rollout hangs and times out", "deploy to staging stuck on rollout"),
        ("raise_probe_timeout", "deploy"),
        "Timeout: rollout exceeded 600s",
    ),
    "feed": (
        ("Nightly build fails: package feed 401", "package restore 401 on build agent", "private feed 401 on restore"),
        ("refresh_token", "restore"),
        "HTTP 401 Unauthorized",
    ),
    "cert": (
        ("TLS certificate expired on the api gateway", "gateway cert expired, handshakes fail", "renew gateway cert"),
        ("renew_cert", "reload_gateway"),
        "SSLError: certificate has expired",
    ),
    "disk": (
        ("Database disk is full", "postgres volume out of space", "db disk usage at 100 percent"),
        ("vacuum", "grow_volume"),
        "OSError: No space left on device",
    ),
}


def loop(runs: int, failures: float, seed: int) -> None:
    rng = random.Random(seed)
    with aa.Memory.open(":memory:", clock=FixedClock(), vector_budget=30.0) as mem:
        for i in range(runs):
            family = rng.choice(sorted(FAMILIES))
            requests, fix, error = FAMILIES[family]
            task = f"{rng.choice(requests)} (ticket {rng.randint(100, 999)})"
            with mem.run(task, scope=SCOPE, run_id=f"r{i}") as run:
                if f"{fix[0]}(" not in run.reference_block():
                    run.tool(fix[-1], error=error)
                    run.next_attempt()
                for tool in fix:
                    run.tool(tool, result="ok")
                run.check("fixed", passed=rng.random() >= failures)
        mem.wait_indexed(30.0)
        print(f"{runs} runs, {failures:.0%} failing for other reasons")
        print("| family | records shown | hits | shown lesson | copies counted |")
        print("|---|---|---|---|---|")
        for family, (requests, _, _) in FAMILIES.items():
            block, shown = mem.block_with_hits(requests[0], scope=SCOPE)
            hits = mem.search(requests[0], scope=SCOPE, k=8)
            status = ", ".join(f"{h.experience.status.label} {h.experience.confidence:.2f}" for h in shown)
            counts = [line.rsplit("verified in ", 1)[1] for line in block.splitlines() if "verified in " in line]
            print(f"| {family} | {len(shown)} | {len(hits)} | {status} | {'; '.join(counts) or '—'} |")
        statuses = Counter(item.experience.status.label for item in mem.lessons(scope=SCOPE, limit=1000))
        print("stored:", ", ".join(f"{count} {label}" for label, count in sorted(statuses.items())))


@cache
def below_half(supporting: int, contradicting: int) -> float:
    """P(success rate < 0.5) under Beta(1 + S, 1 + F): a binomial tail, exact for integers."""
    a, n = 1 + supporting, 1 + supporting + contradicting
    return sum(comb(n, k) for k in range(a, n + 1)) / 2**n


RULES: dict[str, Callable[[int, int], bool]] = {
    "shipped (F > S)": lambda s, f: f > 0 and (1 + s) / (2 + s + f) < 0.5,
    "P(success < .5) > 0.9": lambda s, f: f > 0 and below_half(s, f) > 0.9,
}


def walks(n: int, seed: int, longest: int = 300) -> None:
    rng = random.Random(seed)
    rates = (0.8, 0.7, 0.6, 0.3, 0.2)
    print(f"\n{n:,} lessons per cell, {longest} outcomes at most; buried share (median outcomes until then)")
    print("| rule | " + " | ".join(f"success {p}" for p in rates) + " |")
    print("|---|" + "---|" * len(rates))
    for name, contested in RULES.items():
        cells = []
        for p in rates:
            after = []
            for _ in range(n):
                s, f = 1, 0
                for step in range(1, longest + 1):
                    s, f = (s + 1, f) if rng.random() < p else (s, f + 1)
                    if contested(s, f):
                        after.append(step)
                        break
            cells.append(f"{len(after) / n:.1%} ({statistics.median(after):g})" if after else "0%")
        print(f"| {name} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=120, help="runs through the real path (0: none)")
    parser.add_argument("--failures", type=float, default=0.3, help="share of runs failing for other reasons")
    parser.add_argument("--walks", type=int, default=20_000, help="simulated lessons per cell (0: none)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.runs:
        loop(args.runs, args.failures, args.seed)
    if args.walks:
        walks(args.walks, args.seed)


if __name__ == "__main__":
    main()
