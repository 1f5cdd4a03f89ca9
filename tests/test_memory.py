"""The facade end to end, on every store backend."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import afteraction as aa
from afteraction.testing import FixedClock, make_experience
from tests.builders import ACME, OTHER

AGENT = aa.Scope(tenant="acme", app="support", project="refunds", agent="refund-agent")


@pytest.fixture(params=["memory", "sqlite"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[aa.Memory]:
    url = ":memory:" if request.param == "memory" else str(tmp_path / "m.db")
    with aa.Memory.open(url, clock=FixedClock(), allow_args=("strategy",)) as memory:
        yield memory


def learn(mem: aa.Memory, scope: aa.Scope = AGENT, run_id: str | None = None) -> aa.RunRecorder:
    with mem.run("Refund ticket 42 is stuck in pending", scope=scope, env={"os": "linux"}, run_id=run_id) as run:
        run.tool("run_refund_check", args={"strategy": "retry"}, error="LockHeldError: refund lock is held")
        run.next_attempt()
        run.tool("run_refund_check", args={"strategy": "wait-for-lock"}, result="issued")
        run.check("refund-issued", passed=True)
    return run


def test_the_loop_from_design_md(mem: aa.Memory) -> None:
    run = learn(mem)
    assert run.experience is not None and run.experience.status is aa.Status.VALIDATED
    hits = mem.search("refund stuck in pending", scope=AGENT, k=5)
    assert [h.experience.id for h in hits] == [run.experience.id]
    block = mem.reference_block("refund stuck in pending", scope=AGENT)
    assert block.startswith("=== BEGIN REFERENCE (UNTRUSTED REFERENCE MATERIAL) ===\n")
    assert "LockHeldError" in block and "strategy=wait-for-lock" in block
    assert mem.reference_block("book a meeting room for Thursday", scope=AGENT) == ""


def test_finishing_the_same_run_twice_stores_one_record(mem: aa.Memory) -> None:
    first = learn(mem, run_id="host-run-7")
    second = learn(mem, run_id="host-run-7")
    assert first.experience is not None and second.experience is not None
    assert first.experience.id == second.experience.id
    assert len(mem.lessons(scope=AGENT)) == 1
    assert first.finish() is first.experience  # idempotent on the recorder too


def test_failed_check_quarantines_and_never_injects(mem: aa.Memory) -> None:
    with mem.run("Refund ticket 42 is stuck in pending", scope=AGENT) as run:
        run.tool("run_refund_check", args={"strategy": "retry"}, error="LockHeldError: held")
        run.check("refund-issued", passed=False)
    assert run.experience is not None and run.experience.status is aa.Status.QUARANTINED
    assert mem.search("refund stuck pending", scope=AGENT) == []
    [lesson] = mem.lessons(scope=AGENT)
    assert not lesson.eligible and lesson.reason == "status is Quarantined"


def test_no_verdict_stores_nothing(mem: aa.Memory) -> None:
    with mem.run("Refund ticket 42 is stuck", scope=AGENT) as run:
        run.tool("run_refund_check", result="issued")
    with mem.run("Refund ticket 43 is stuck", scope=AGENT) as run2:
        run2.check("refund-issued", passed=None)
    assert run.experience is None and run2.experience is None
    assert mem.lessons(scope=AGENT) == []


def test_a_half_finished_run_is_never_visible(mem: aa.Memory) -> None:
    run = mem.run("Refund ticket 42 is stuck in pending", scope=AGENT)
    run.tool("run_refund_check", result="issued")
    run.check("refund-issued", passed=True)
    assert mem.search("refund stuck pending", scope=AGENT) == []
    run.finish()
    assert len(mem.search("refund stuck pending", scope=AGENT)) == 1


def test_tenants_never_see_each_other(mem: aa.Memory) -> None:
    learn(mem, scope=ACME, run_id="same-run")
    learn(mem, scope=OTHER, run_id="same-run")
    assert len(mem.lessons(scope=ACME)) == 1 and len(mem.lessons(scope=OTHER)) == 1
    other_app = aa.Scope(tenant="acme", app="billing", project="refunds")
    assert mem.search("refund stuck pending", scope=other_app) == []


def test_exception_in_the_block_is_recorded_as_a_failed_attempt(mem: aa.Memory) -> None:
    with pytest.raises(RuntimeError), mem.run("Refund ticket 9 is stuck", scope=AGENT) as run:
        run.check("refund-issued", passed=False)
        raise RuntimeError("boom")
    assert run.experience is not None and "RuntimeError" in run.experience.lesson


def test_secrets_never_stored(mem: aa.Memory) -> None:
    with mem.run("Rotate the deploy key for the registry", scope=AGENT) as run:
        run.tool(
            "login",
            args={"password": "hunter2-very-secret", "strategy": "token sk-abcdefghijklmnopqrstuvwxyz123456"},
            error="AuthError: token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlc2lnbmF0dXJl rejected",
        )
        run.check("rotated", passed=False)
    stored = [e.to_dict() for e in mem.export()]
    text = repr(stored)
    for secret in ("hunter2", "sk-abcdefghijklmnopqrstuvwxyz123456", "eyJhbGciOiJIUzI1NiJ9"):
        assert secret not in text


def test_memory_never_raises_into_the_agent(mem: aa.Memory) -> None:
    reported: list[tuple[BaseException, str]] = []
    with mem.run("Refund ticket 42 is stuck", scope=AGENT, on_error=lambda e, w: reported.append((e, w))) as run:
        run.tool("run_refund_check", args={"strategy": object()}, result=object())
        run.check("refund-issued", passed=True)
    assert [w for _, w in reported] == ["run.tool", "run.tool"]
    assert all(isinstance(e, aa.ValidationError) for e, _ in reported)
    assert run.experience is not None  # the run still teaches, the bad values marked


def test_store_failure_goes_to_on_error(tmp_path: Path) -> None:
    reported: list[str] = []
    mem = aa.Memory.open(str(tmp_path / "x.db"), on_error=lambda e, w: reported.append(w))
    run = mem.run("Refund ticket 42 is stuck", scope=AGENT)
    run.tool("run_refund_check", result="issued")
    run.check("refund-issued", passed=True)
    mem.close()
    assert run.finish() is None
    assert reported == ["run.finish"]


def test_add_keeps_the_given_id_and_is_idempotent(mem: aa.Memory) -> None:
    e = make_experience("Imported lesson about certificates", scope=ACME, id="legacy-17")
    assert mem.add(e) is True
    assert mem.add(e) is False
    assert mem.get("legacy-17", scope=ACME) == e


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda m: m.search("x", scope=ACME, k=0), "k"),
        (lambda m: m.search(3, scope=ACME), "query"),
        (lambda m: m.run("", scope=ACME), "task"),
        (lambda m: m.run("task", scope={"tenant": "acme"}), "scope"),
        (lambda m: m.lessons(scope=ACME, status="happy"), "status"),
        (lambda m: aa.Scope(tenant=" ", app="a", project="p"), "scope.tenant"),
        (lambda m: make_experience("t", scope=ACME, confidence=float("nan")), "confidence"),
        (lambda m: make_experience("t", scope=ACME, confidence=1.5), "confidence"),
    ],
)
def test_bad_input_names_the_field(mem: aa.Memory, call: Any, field: str) -> None:
    with pytest.raises(aa.ValidationError) as info:
        call(mem)
    assert info.value.field == field


def test_record_outcome_moves_confidence(mem: aa.Memory) -> None:
    run = learn(mem)
    assert run.experience is not None
    updated = mem.record_outcome(run.experience.id, scope=AGENT, success=True)
    assert updated.supporting == 2 and updated.confidence == 3 / 4 and updated.revision == 2


def test_async_face_is_the_same_implementation(mem: aa.Memory) -> None:
    learn(mem)

    async def main() -> tuple[list[aa.Hit], str]:
        aio = mem.aio
        return await aio.search("refund stuck in pending", scope=AGENT), await aio.reference_block(
            "refund stuck in pending", scope=AGENT
        )

    hits, block = asyncio.run(main())
    assert len(hits) == 1 and block == mem.reference_block("refund stuck in pending", scope=AGENT)


def test_the_async_face_has_every_method_of_the_memory(mem: aa.Memory) -> None:
    sync_only = {"now", "report", "aio"}  # a clock, the error hook, the face itself
    methods = {n for n in dir(aa.Memory) if not n.startswith("_") and callable(getattr(aa.Memory, n))} - sync_only
    assert methods <= set(dir(aa.AsyncMemory)), methods - set(dir(aa.AsyncMemory))
    run = learn(mem)
    assert run.experience is not None

    async def main() -> tuple[int, aa.Experience, list[aa.Experience], tuple[str, tuple[aa.Hit, ...]]]:
        aio = mem.aio
        added = await aio.add_many([make_experience("Imported lesson", scope=ACME, id="legacy-1")])
        got = await aio.get(run.experience.id, scope=AGENT)  # type: ignore[union-attr]
        exported = [e async for e in aio.export("acme", page=1)]
        return added, got, exported, await aio.block_with_hits("refund stuck in pending", scope=AGENT)

    added, got, exported, (block, shown) = asyncio.run(main())
    assert added == 1 and got == run.experience
    assert sorted(e.id for e in exported) == sorted(e.id for e in mem.export("acme"))
    again, hits = mem.block_with_hits("refund stuck in pending", scope=AGENT)  # the clock moves: the same lessons
    assert block == again and [h.id for h in shown] == [h.id for h in hits] == [run.experience.id]


def test_calling_a_failed_tool_again_is_a_new_attempt(mem: aa.Memory) -> None:
    with mem.run("Refund ticket 42 is stuck in pending", scope=AGENT) as run:
        run.tool("run_refund_check", args={"strategy": "retry"}, error="LockHeldError: held")
        run.tool("run_refund_check", args={"strategy": "wait-for-lock"}, result="issued")
        run.check("refund-issued", passed=True)
    assert run.experience is not None
    assert run.experience.lesson.startswith("Verified after 2 attempts. Failed: attempt 0 — LockHeldError.")


def test_odd_tool_names_and_bad_block_bounds(mem: aa.Memory) -> None:
    with mem.run("Refund ticket 42 is stuck in pending", scope=AGENT) as run:
        run.tool("run_refund\ncheck\x00", args={}, result="issued")
        run.check("refund-issued", passed=True)
    assert run.experience is not None and run.experience.solution is not None
    assert run.experience.solution.steps == ("run_refund check() → issued",)
    with pytest.raises(aa.ValidationError) as info:
        mem.reference_block("refund stuck in pending", scope=AGENT, max_records=0)
    assert info.value.field == "max_records"


def test_limits_refuse_with_a_report_never_a_crash() -> None:
    reported: list[str] = []
    limits = aa.Limits(max_calls=3, max_attempts=2)
    mem = aa.Memory.open(":memory:", limits=limits, on_error=lambda e, w: reported.append(f"{w}: {e}"))
    with mem.run("Refund ticket 42 is stuck in pending", scope=AGENT) as run:
        for _ in range(5):
            run.tool("poll", result="pending")
        for _ in range(4):  # the limit is met once and reported once
            run.next_attempt()
        run.tool("run_refund_check", result="issued")
        run.check("refund-issued", passed=True)
    assert reported == [
        "run.tool: attempts[0].calls: more than 3 tool calls in one attempt; the rest are not recorded",
        "run.next_attempt: attempts: more than 2 attempts; later calls join the last one",
    ]
    assert run.experience is not None
    assert run.experience.lesson.startswith("Verified after 2 attempts.")


def test_learn_from_a_real_aep_stream(mem: aa.Memory, conformance: Path) -> None:
    import json

    from afteraction.core.assemble import assemble

    lines = (conformance / "aep-sdk-streams" / "openai-agents" / "events.jsonl").read_text().splitlines()
    runs = {run.agent: run for run in assemble([aa.Event.from_dict(json.loads(line)) for line in lines], AGENT)}
    travel = mem.learn(runs["travel_assistant"], verify=[aa.verify.tool_succeeded("get_weather")])
    calculator = mem.learn(runs["calculator"], verify=[aa.verify.tool_succeeded("divide")])
    assert travel is not None and travel.status is aa.Status.VALIDATED
    assert calculator is not None and calculator.status is aa.Status.QUARANTINED
    assert mem.learn(runs["triage"]) is None  # no verdict: nothing stored
    assert [h.id for h in mem.search("travel assistant weather", scope=AGENT)] == [travel.id]
    assert mem.learn(runs["travel_assistant"], verify=[aa.verify.tool_succeeded("get_weather")]) == travel
    with pytest.raises(aa.ValidationError) as info:
        mem.learn(aa.Run(id="r", task="t", scope=AGENT, started_at=travel.created_at))
    assert info.value.field == "run.state"


def test_a_record_too_large_for_the_block_gives_way_to_the_next_ranked(tmp_path: Path) -> None:
    """Found by a user: a long ticket ranked first, too large for the bounds, emptied a block of one
    record although a short lesson about the same problem fitted."""
    ticket = "Refund for order 42 is stuck in pending. " + "worker=refund-7 state=pending lock=held shard=eu-1; " * 20
    with aa.Memory.open(str(tmp_path / "m.db"), embedder=None, clock=FixedClock()) as mem:
        mem.add(make_experience(ticket, scope=ACME, id="long"))
        mem.add(make_experience("Refund stuck in pending: the refund lock is held", scope=ACME, id="short"))
        query = "refund stuck in pending, worker refund-7 on shard eu-1 shows the lock held"
        assert [hit.id for hit in mem.search(query, scope=ACME)] == ["long", "short"]
        for bounds in ({"max_records": 1, "max_tokens": 300}, {"max_records": 1, "max_bytes": 1024}):
            block, shown = mem.block_with_hits(query, scope=ACME, **bounds)
            assert [hit.id for hit in shown] == ["short"] and block.count("\n[") == 1
        block, shown = mem.block_with_hits(query, scope=ACME, max_records=1)
        assert [hit.id for hit in shown] == ["long"]  # when it fits, the best ranked is shown


def test_a_run_of_many_steps_checks_errors_and_settings_stores_a_readable_importable_lesson(tmp_path: Path) -> None:
    """Found by a resources session: a verified run with 65 steps (or checks, errors, environment keys) stored
    a record that failed to read back, and every listing, search, block and export failed from then on."""
    env = {f"k{i}": "v" for i in range(65)}
    with aa.Memory.open(str(tmp_path / "m.db"), embedder=None, clock=FixedClock()) as mem:
        with mem.run("Rebuild the search index after the schema change", scope=ACME, env=env) as run:
            for i in range(65):
                run.tool(f"probe_shard_{i}", error=f"ShardError{i}: shard {i} is locked")
            run.next_attempt()
            for i in range(65):
                run.tool(f"reindex_shard_{i}", result="ok")
            for i in range(65):
                run.check(f"shard-{i}-ok", passed=True)
        lesson = run.experience
        assert lesson is not None and lesson.solution is not None and lesson.scenario is not None
        assert len(lesson.checks) == len(lesson.solution.steps) == len(lesson.scenario.symptoms) == 64
        assert lesson.checks[-1] == "… and 2 more" and len(lesson.scenario.environment) == 64
        assert [found.experience.id for found in mem.lessons(scope=ACME)] == [lesson.id]
        assert mem.search("rebuild the search index", scope=ACME)[0].id == lesson.id
        exported = [item.to_dict() for item in mem.export()]
    assert aa.Experience.from_dict(exported[0], strict=True) == lesson  # an import takes it back


def test_a_record_stored_with_more_items_than_an_import_allows_still_reads(tmp_path: Path) -> None:
    """A record an earlier version stored with 65 steps stays readable (only an import enforces the count)."""
    record = make_experience("Rebuild the search index", scope=ACME, id="legacy")
    data = record.to_dict()
    data["checks"] = [f"c{i}" for i in range(65)]
    with pytest.raises(aa.ValidationError, match="checks"):
        aa.Experience.from_dict(data, strict=True)
    assert len(aa.Experience.from_dict(data).checks) == 65
