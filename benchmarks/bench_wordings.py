"""Lessons that learn the words of the verified runs they helped: does a later rewording find them?

In each labelled corpus, every lesson that a paraphrase asks about and that one more query asks about
(a long realistic request first, else a second paraphrase, a stop-word heavy one, other word forms,
or a distractor) gets that other query as the task of one verified reuse, through the path a run's
feedback takes (``Memory.record_outcome(id, scope=<the lesson's>, success=True, key=..., task=...)``):
the lesson's text and vector then carry that wording (``Experience.wordings``). Then the paraphrases
not used as wordings are asked, and so are the queries with no right answer (no match, other scope),
once on the store without wordings and once with them: the same corpus, store and default embedder.

    .venv/bin/python benchmarks/bench_wordings.py [--corpus benchmarks/quality_heldout3.json ...] [--json]

This is the best case of the mechanism (each lesson learned one wording, from a request written about
it); what it measures is how far one other wording carries to a request worded differently again.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bench_quality as bq

import afteraction as aa

HERE = Path(__file__).resolve().parent
CORPORA = ("quality_corpus.json", "quality_heldout.json", "quality_heldout2.json", "quality_heldout3.json",
           "quality_heldout4.json")  # fmt: skip
#: Which other query about a lesson becomes its wording, in order of preference.
TAUGHT_BY = ("realistic", "paraphrase", "stopword_heavy", "morphology", "distractor")
UNANSWERABLE = ("no_match", "other_scope")
SMOKE_QUERIES = 8


def split(corpus: bq.Corpus) -> tuple[dict[str, bq.Query], list[bq.Query], list[bq.Query]]:
    """The query that teaches each lesson its wording (by lesson id), the paraphrases asked
    afterwards (of lessons that learned one), and the queries with no right answer."""
    about: dict[str, list[bq.Query]] = {}
    for query in corpus.queries:
        if query.answerable:
            about.setdefault(query.answers[0], []).append(query)
    teaches: dict[str, bq.Query] = {}
    for lesson, queries in about.items():
        paraphrases = [q for q in queries if q.category == "paraphrase"]
        for category in TAUGHT_BY:
            if category == "paraphrase" and len(paraphrases) < 2:
                continue  # one paraphrase is kept to be asked
            found = [q for q in queries if q.category == category]
            if paraphrases and found:
                teaches[lesson] = found[0]
                break
    taught = {q.id for q in teaches.values()}
    asked = [q for q in corpus.queries if q.category == "paraphrase" and q.id not in taught and q.answers[0] in teaches]
    return teaches, asked, [q for q in corpus.queries if q.category in UNANSWERABLE]


def measure(corpus: bq.Corpus, smoke: bool) -> dict[str, Any]:
    teaches, asked, unanswerable = split(corpus)
    if smoke:
        asked, unanswerable = asked[:SMOKE_QUERIES], unanswerable[:SMOKE_QUERIES]
    lessons = {lesson.id: lesson for lesson in corpus.lessons}

    def teach(mem: aa.Memory) -> None:
        for id, query in teaches.items():
            mem.record_outcome(id, scope=lessons[id].scope, success=True, key=f"bench:{query.id}", task=query.text)

    out: dict[str, Any] = {"lessons taught": len(teaches), "paraphrases asked": len(asked),
                           "unanswerable asked": len(unanswerable)}  # fmt: skip

    def ask(name: str, prepare: Callable[[aa.Memory], None] | None) -> list[bq.Outcome]:
        outcomes, errors, _, channel = bq.run(corpus, [*asked, *unanswerable], "sqlite", prepare=prepare)
        if errors or channel.ran == 0:
            raise SystemExit(f"{name}: memory reported {errors[:3]}; vector channel ran {channel.ran} times")
        para = bq.summarize("paraphrase", [o for o in outcomes if o.query.answerable])
        none = bq.summarize("unanswerable", [o for o in outcomes if not o.query.answerable])
        out[name] = {"R@1": para.r1, "MRR": para.mrr, "no result": para.no_result, "given a block": none.given_block}
        return outcomes

    baseline = ask("without wordings", None)
    ask("with one wording each", teach)
    out["taught wrongly"] = mistaught(corpus, baseline, lessons)
    return out


def mistaught(corpus: bq.Corpus, baseline: Sequence[bq.Outcome], lessons: dict[str, aa.Experience]) -> dict[str, Any]:
    """The worst case: every other request with no right answer that got a block anyway (even
    ones, in corpus order) is a run that passed its checks, so it teaches its words to every lesson
    it was given. How often do the rest of those requests (odd ones) get a block then, and do the
    paraphrases still find their lessons?"""
    unanswerable = [o for o in baseline if not o.query.answerable]
    teachers = [o for o in unanswerable[::2] if o.block]
    watched = [o.query for o in unanswerable[1::2]]
    asked = [o.query for o in baseline if o.query.answerable]

    def teach(mem: aa.Memory) -> None:
        for outcome in teachers:
            for id in outcome.returned:
                key, text = f"bench:{outcome.query.id}", outcome.query.text
                mem.record_outcome(id, scope=lessons[id].scope, success=True, key=key, task=text)

    after, errors, _, _ = bq.run(corpus, [*asked, *watched, *(o.query for o in teachers)], "sqlite", prepare=teach)
    if errors:
        raise SystemExit(f"taught wrongly: memory reported {errors[:3]}")
    teaching = {o.query.id for o in teachers}
    watched_ids = {q.id for q in watched}

    def blocks(outcomes: Sequence[bq.Outcome], ids: set[str]) -> float:
        chosen = [o for o in outcomes if o.query.id in ids]
        return sum(o.block for o in chosen) / len(chosen) if chosen else 0.0

    def r1(outcomes: Sequence[bq.Outcome]) -> float:
        return bq.summarize("paraphrase", [o for o in outcomes if o.query.answerable]).r1

    return {
        "teaching requests": len(teachers),
        "lessons taught": len({id for o in teachers for id in o.returned}),
        "others given a block": (blocks(baseline, watched_ids), blocks(after, watched_ids)),
        "teaching requests given a block again": blocks(after, teaching),
        "paraphrase R@1": (r1(baseline), r1(after)),
    }


def table(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| corpus | lessons taught | paraphrases asked | R@1 | MRR | no result | no match or other scope: a block |",
        "|---|---|---|---|---|---|---|",
    ]
    for corpus, found in results.items():
        before, after = found["without wordings"], found["with one wording each"]
        cells = [f"{before[k]:.2f} → {after[k]:.2f}" for k in ("R@1", "MRR")]
        cells += [f"{before[k]:.1%} → {after[k]:.1%}" for k in ("no result", "given a block")]
        lines.append(f"| {corpus} | {found['lessons taught']} | {found['paraphrases asked']} | {' | '.join(cells)} |")
    lines += [
        "",
        "Taught wrongly (every other request with no right answer that got a block passes its checks anyway):",
        "",
        "| corpus | teaching requests | lessons taught | the others given a block | the teaching ones again "
        "| paraphrase R@1 |",
        "|---|---|---|---|---|---|",
    ]
    for corpus, found in results.items():
        wrong = found["taught wrongly"]
        (others_before, others_after), (r1_before, r1_after) = wrong["others given a block"], wrong["paraphrase R@1"]
        lines.append(
            f"| {corpus} | {wrong['teaching requests']} | {wrong['lessons taught']} | {others_before:.1%} → "
            f"{others_after:.1%} | {wrong['teaching requests given a block again']:.0%} | {r1_before:.2f} → "
            f"{r1_after:.2f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", type=Path, help="a labelled corpus (default: all five)")
    parser.add_argument("--smoke", action="store_true", help=f"the project corpus, {SMOKE_QUERIES} queries of a kind")
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    args = parser.parse_args(argv)
    paths = args.corpus or [HERE / name for name in (CORPORA[:1] if args.smoke else CORPORA)]
    results = {}
    for path in paths:
        print(f"measuring {path.name} …", file=sys.stderr, flush=True)
        results[path.name] = measure(bq.load(path), args.smoke)
    print(json.dumps(results, indent=2) if args.json else table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
