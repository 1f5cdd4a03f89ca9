"""The retrieval-quality corpus keeps its shape, and the scorer computes R@1 / R@5 / MRR right."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import afteraction as aa

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_quality", BENCHMARKS / "bench_quality.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


bench = _bench()


@dataclass(frozen=True)
class Minimums:
    lessons: int
    queries: int
    per_category: int


#: Every corpus the benchmark is run on, with the sizes it promises: the project's own corpus (issue 3's
#: minimums) and the held-out ones that retrieval is never tuned on (their briefs asked for more).
CORPORA = {
    "quality_corpus.json": Minimums(lessons=60, queries=150, per_category=15),
    "quality_heldout.json": Minimums(lessons=70, queries=180, per_category=20),
    "quality_heldout2.json": Minimums(lessons=80, queries=200, per_category=20),
    "quality_heldout3.json": Minimums(lessons=80, queries=200, per_category=20),
    "quality_heldout4.json": Minimums(lessons=80, queries=200, per_category=20),
    "quality_heldout5.json": Minimums(lessons=80, queries=200, per_category=20),
    "quality_heldout6.json": Minimums(lessons=80, queries=200, per_category=20),
}


@dataclass(frozen=True)
class Loaded:
    name: str
    raw: dict[str, Any]
    corpus: Any
    lessons: dict[str, aa.Experience]
    minimums: Minimums


@pytest.fixture(scope="module", params=sorted(CORPORA))
def loaded(request: pytest.FixtureRequest) -> Loaded:
    path = BENCHMARKS / request.param
    corpus = bench.load(path)
    return Loaded(
        name=request.param,
        raw=json.loads(path.read_text(encoding="utf-8")),
        corpus=corpus,
        lessons={lesson.id: lesson for lesson in corpus.lessons},
        minimums=CORPORA[request.param],
    )


def _flat(text: str) -> str:
    return " ".join(text.casefold().split())


# -- the corpora ------------------------------------------------------------------------------


def test_counts_meet_the_minimums(loaded: Loaded) -> None:
    corpus, least = loaded.corpus, loaded.minimums
    assert len(corpus.lessons) >= least.lessons
    assert len(corpus.queries) >= least.queries
    per_category = {c: sum(q.category == c for q in corpus.queries) for c in bench.CATEGORIES}
    assert all(n >= least.per_category for n in per_category.values()), per_category


def test_categories_are_exactly_the_listed_ones(loaded: Loaded) -> None:
    assert bench.CATEGORIES == (
        "exact",
        "paraphrase",
        "morphology",
        "stopword_heavy",
        "realistic",
        "distractor",
        "other_scope",
        "no_match",
    )
    assert tuple(loaded.raw["categories"]) == bench.CATEGORIES
    assert {q["category"] for q in loaded.raw["queries"]} == set(bench.CATEGORIES)


def test_query_ids_and_texts_are_unique(loaded: Loaded) -> None:
    queries = loaded.corpus.queries
    assert len({q.id for q in queries}) == len(queries)
    assert len({_flat(q.text) for q in queries}) == len(queries)


def test_lessons_are_as_export_writes_them(loaded: Loaded) -> None:
    for item in loaded.raw["lessons"]:
        assert aa.Experience.from_dict(item).to_dict() == item, item["id"]
        assert re.match(r"Verified after \d+ attempts?\. ", item["lesson"]), item["id"]
        assert item["summary"].startswith(("What failed: ", "What worked: ")), item["id"]
        assert item["scenario"]["task"] == item["task"]


def test_answerable_queries_name_lessons_their_scope_may_be_given(loaded: Loaded) -> None:
    for query in loaded.corpus.queries:
        if query.category in bench.UNANSWERABLE:
            assert query.answers == (), query.id
            continue
        assert query.answers, query.id
        for id in query.answers:
            lesson = loaded.lessons[id]
            assert query.scope.sees(lesson.scope), (query.id, id)
            assert lesson.eligibility(loaded.corpus.now) is None, (query.id, id)


def test_other_scope_queries_are_about_a_lesson_out_of_reach(loaded: Loaded) -> None:
    for query in loaded.corpus.queries:
        if query.category == "other_scope":
            assert query.about, query.id
            assert all(not query.scope.sees(loaded.lessons[id].scope) for id in query.about), query.id


def test_distractors_exist_and_are_wrong(loaded: Loaded) -> None:
    labelled = [q for q in loaded.corpus.queries if q.category == "distractor"]
    assert all(q.distractors for q in labelled)
    for query in labelled:
        assert not set(query.distractors) & set(query.answers), query.id
        assert all(query.scope.sees(loaded.lessons[id].scope) for id in query.distractors), query.id


def test_only_exact_queries_repeat_their_lessons_wording(loaded: Loaded) -> None:
    for query in loaded.corpus.queries:
        targets = [loaded.lessons[id] for id in (*query.answers, *query.about)]
        if query.category == "exact":
            wording = [_flat(" ".join((t.task, *(t.scenario.symptoms if t.scenario else ())))) for t in targets]
            assert any(_flat(query.text) in text for text in wording), query.id
        else:
            assert all(_flat(query.text) not in _flat(t.task) for t in targets), query.id


@pytest.mark.parametrize(
    "builder",
    [
        "build_heldout.py",
        "build_heldout2.py",
        "build_heldout3.py",
        "build_heldout4.py",
        "build_heldout5.py",
        "build_heldout6.py",
    ],
)
def test_each_held_out_corpus_is_what_its_builder_records(builder: str) -> None:
    # Their lessons go through the real recorder path, so a change there that alters a stored lesson shows here.
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / builder), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c["queries"][0].update(category="fuzzy"), "category 'fuzzy'"),
        (lambda c: c["queries"][0].update(answers=["exp_nowhere"]), "do not exist"),
        (lambda c: c["queries"][-1].update(answers=[c["lessons"][0]["id"]]), "must not name answers"),
    ],
)
def test_load_refuses_a_broken_corpus(
    tmp_path: Path, loaded: Loaded, change: Callable[[dict[str, Any]], object], message: str
) -> None:
    broken = json.loads(json.dumps(loaded.raw))
    change(broken)
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(bench.CorpusError, match=message):
        bench.load(path)


def test_smoke_subset_spans_every_category(loaded: Loaded) -> None:
    subset = bench.smoke_subset(loaded.corpus.queries)
    counts = {c: sum(q.category == c for q in subset) for c in bench.CATEGORIES}
    assert set(counts.values()) == {bench.SMOKE_PER_CATEGORY}


# -- the scorer -------------------------------------------------------------------------------

SCOPE = aa.Scope(tenant="t", app="a", project="p")


def _outcome(category: str, answers: tuple[str, ...], returned: tuple[str, ...]) -> Any:
    query = bench.Query(id=category, category=category, text="q", scope=SCOPE, answers=answers)
    return bench.Outcome(query, returned, tuple(1.0 for _ in returned), bool(returned), 1.0)


def test_scorer_on_a_hand_made_case() -> None:
    outcomes = [
        _outcome("exact", ("a",), ("a", "b")),  # rank 1
        _outcome("paraphrase", ("a", "c"), ("b", "c", "a")),  # rank 2: the first right one counts
        _outcome("paraphrase", ("a",), ()),  # no result
        _outcome("realistic", ("a",), ("b", "c", "d", "e", "f", "a")),  # right one only at 6 > k
        _outcome("no_match", (), ()),  # correctly nothing
        _outcome("other_scope", (), ("b",)),  # given a block
    ]
    assert [o.rank for o in outcomes] == [1, 2, None, None, None, None]
    row = bench.summarize("all", outcomes)
    assert row.queries == 6
    assert row.r1 == pytest.approx(2 / 6)
    assert row.r5 == pytest.approx(3 / 6)
    assert row.mrr == pytest.approx((1 + 0.5 + 0 + 0 + 1 + 0) / 6)
    assert row.no_result == pytest.approx(1 / 4)
    assert row.given_block == pytest.approx(1 / 2)
    assert bench.misses_of(row) == {"r1": True, "mrr": True, "no_result": True, "given_block": True}
    names = [r.name for r in bench.rows(outcomes)]
    assert names == ["exact", "paraphrase", "realistic", "other_scope", "no_match", "answerable", "all"]
    answerable = bench.rows(outcomes)[-2]
    assert (answerable.queries, answerable.given_block) == (4, None)


def test_a_perfect_run_misses_no_target() -> None:
    outcomes = [_outcome("exact", ("a",), ("a",)), _outcome("no_match", (), ())]
    row = bench.summarize("all", outcomes)
    assert (row.r1, row.r5, row.mrr, row.no_result, row.given_block) == (1.0, 1.0, 1.0, 0.0, 0.0)
    assert not any(bench.misses_of(row).values())


def test_folds_keep_each_lessons_queries_on_one_side() -> None:
    queries = bench.load(bench.DEFAULT_CORPUS).queries
    side = bench.folds(queries)
    assert set(side) == {q.id for q in queries} and set(side.values()) == {"A", "B"}
    by_lesson: dict[str, set[str]] = {}
    for query in queries:
        for lesson in query.answers[:1] or query.about[:1]:
            by_lesson.setdefault(lesson, set()).add(side[query.id])
    assert all(len(sides) == 1 for sides in by_lesson.values())
    sizes = [sum(1 for s in side.values() if s == f) for f in "AB"]
    assert abs(sizes[0] - sizes[1]) <= max(len(q) for q in _groups(queries).values())
    names = [row.name for row in bench.fold_rows([_outcome("no_match", (), ()), _outcome("exact", ("a",), ("a",))])]
    assert names == ["fold A", "fold B", "all"]


def _groups(queries: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for query in queries:
        out.setdefault((query.answers or query.about or (query.id,))[0], []).append(query)
    return out


def test_weight_overrides_are_typed_and_checked() -> None:
    weights = bench.weights_from(["min_hybrid_relevance=0.4", "coverage_terms=6", "fusion=rrf"])
    assert (weights.min_hybrid_relevance, weights.coverage_terms, weights.fusion) == (0.4, 6, "rrf")
    with pytest.raises(bench.CorpusError, match="NAME=VALUE"):
        bench.weights_from(["floor=0.4"])
    with pytest.raises(ValueError, match="coverage_terms"):
        bench.weights_from(["coverage_terms=0"])


def test_an_optional_embedder_is_measured_with_its_own_weights() -> None:
    from afteraction.embed.e5 import WEIGHTS

    assert bench.embedder_weights("minilm") == aa.Weights()
    e5 = bench.weights_from(["coverage_terms=6"], bench.embedder_weights("e5"))
    assert (e5.text_share, e5.min_hybrid_relevance, e5.coverage_terms) == (
        WEIGHTS["text_share"],
        WEIGHTS["min_hybrid_relevance"],
        6,
    )
    assert bench.parse(["--embedder", "e5"]).embedder == "e5"
    with pytest.raises(SystemExit):
        bench.parse(["--embedder", "nope"])
