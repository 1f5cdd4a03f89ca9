"""A remote memory answers each call as a local one does (the README is the spec): the same call on a
RemoteMemory against a real `afteraction serve --dev` and on a local memory gives the same value, or
the same error naming the same argument. Each case here once differed (the h29 hunt): a run's block
stopped at the service's best 2 k hits, ids ``.`` and ``..`` reached another route, a repeated id
failed a whole batch, lone surrogates and wrong types escaped as UnicodeEncodeError/TypeError, and
``k=None``, ``lessons(limit=…)`` and ``set_status`` followed rules of their own."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any

import pytest

import afteraction as aa
from afteraction.client import RemoteMemory
from afteraction.errors import ForbiddenError, ValidationError
from tests.serving import serving

Call = Callable[[aa.Memory], Any]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serving(tmp_path_factory.mktemp("parity") / "served.db", "--dev", "--no-vectors") as url:
        yield url


@pytest.fixture
def scope(request: pytest.FixtureRequest) -> aa.Scope:
    name = request.node.name
    return aa.Scope(tenant="dev", app="support", project=f"{name[:40]}-{zlib.crc32(name.encode()):08x}")


@pytest.fixture
def pair(server: str) -> Iterator[tuple[aa.Memory, aa.Memory]]:
    """A local memory (text search only, as the served one) and a remote one, each empty for the test."""
    local, remote = aa.Memory.open(":memory:", embedder=None), aa.Memory.open(server)
    assert isinstance(remote, RemoteMemory)
    yield local, remote
    local.close()
    remote.close()


def lesson(scope: aa.Scope, **fields: Any) -> aa.Experience:
    base: dict[str, Any] = {
        "id": "imp_x",
        "task_id": "t1",
        "task": "Password reset email never arrives",
        "lesson": "Check the SMTP relay queue first.",
        "status": "validated",
        "confidence": 0.8,
        "scope": scope,
        "created_at": datetime(2026, 1, 1, tzinfo=timezone.utc),
        "supporting": 3,
    }
    return aa.Experience(**{**base, **fields})


@pytest.fixture
def tag(scope: aa.Scope) -> str:
    """A prefix for this test's lesson ids: the served tenant ("dev") is every test's, and ids are per tenant."""
    return f"t{zlib.crc32(scope.project.encode()):08x}"


def outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    """What a call gave, as two memories' results compare: its value, or its error's type, field and message."""
    try:
        return ("ok", call())
    except Exception as exc:
        return ("error", type(exc).__name__, getattr(exc, "field", None), str(exc))


def same(local: aa.Memory, remote: aa.Memory, call: Call) -> tuple[Any, ...]:
    found = outcome(lambda: call(local))
    assert outcome(lambda: call(remote)) == found
    return found


def test_a_runs_block_reads_past_copies_of_one_fix_to_other_lessons(
    pair: tuple[aa.Memory, aa.Memory], scope: aa.Scope
) -> None:
    """Ten copies of one fix and one other lesson: a run's block of two records shows both and counts the nine
    other copies, as a local memory's does (the service's best 2 k showed one record, "3 more runs")."""
    task = "deploy pipeline times out on cache restore"
    shown: list[tuple[list[str], tuple[str, ...]]] = []
    for mem in pair:
        copies = [
            lesson(
                scope,
                id=f"cp_{i}",
                task=f"Deploy pipeline times out on cache restore in stage {i}",
                lesson="Clear the runner cache, then retry the deploy.",
                confidence=0.9,
            )
            for i in range(10)
        ]
        assert mem.add_many(copies) == 10
        task_of_other = "Deploy pipeline times out on cache restore"
        assert mem.add(lesson(scope, id="other_1", task=task_of_other, lesson="Raise the timeout.", confidence=0.6))
        with mem.run(task, scope=scope, run_id="r-block") as run:
            block = run.reference_block(max_records=2)
        statuses = [line.strip() for line in block.splitlines() if line.lstrip().startswith("Status")]
        shown.append((statuses, run.given))
    assert shown[0] == shown[1]
    statuses, given = shown[1]
    assert given == ("cp_0", "other_1")
    assert "the same steps verified in 9 more runs" in statuses[0]


@pytest.mark.parametrize("id", [".", ".."])
def test_a_lesson_id_of_dots_is_read_and_forgotten(pair: tuple[aa.Memory, aa.Memory], scope: aa.Scope, id: str) -> None:
    local, remote = pair
    assert same(local, remote, lambda m: m.forget(id, scope=scope)) == ("ok", False)
    assert same(local, remote, lambda m: m.add(lesson(scope, id=id))) == ("ok", True)
    assert same(local, remote, lambda m: m.get(id, scope=scope).id) == ("ok", id)
    assert same(local, remote, lambda m: m.set_status(id, "revoked", scope=scope).status)[0] == "ok"
    assert same(local, remote, lambda m: m.record_outcome(id, scope=scope, success=True).revision) == ("ok", 3)
    assert same(local, remote, lambda m: m.forget(id, scope=scope)) == ("ok", True)


@pytest.mark.parametrize("user", [".", ".."])
def test_a_user_named_with_dots_is_erased(pair: tuple[aa.Memory, aa.Memory], scope: aa.Scope, user: str) -> None:
    theirs = aa.Scope(tenant="dev", app=scope.app, project=scope.project, user=user)
    local, remote = pair
    same(local, remote, lambda m: m.add(lesson(theirs, id=f"imp_user_{len(user)}")))
    assert same(local, remote, lambda m: m.forget_user(user, tenant="dev")) == ("ok", [f"imp_user_{len(user)}"])
    assert same(local, remote, lambda m: m.forget_user(user, tenant="dev")) == ("ok", [])


def test_a_repeated_id_in_a_batch_keeps_the_first_and_counts_as_not_new(
    pair: tuple[aa.Memory, aa.Memory], scope: aa.Scope, tag: str
) -> None:
    local, remote = pair
    first, second = lesson(scope, id=f"{tag}_d1", task="first"), lesson(scope, id=f"{tag}_d1", task="second")
    assert same(local, remote, lambda m: m.add_many([first, second, lesson(scope, id=f"{tag}_d2")])) == ("ok", 2)
    assert same(local, remote, lambda m: m.get(f"{tag}_d1", scope=scope).task) == ("ok", "first")
    big = [lesson(scope, id=f"{tag}_b{i}") for i in range(1500)]
    big[1200] = lesson(scope, id=f"{tag}_b1100")  # a repeat in another request than its first
    assert same(local, remote, lambda m: m.add_many(big)) == ("ok", 1499)
    assert same(local, remote, lambda m: len(m.lessons(scope=scope, limit=2000))) == ("ok", 1501)


def test_a_batch_of_several_requests_is_checked_whole_before_any_is_sent(
    server: str, scope: aa.Scope, tag: str
) -> None:
    """The service refuses a lesson at the largest revision (documented): the caller's index is named, and
    the 1,000 lessons before it are not stored (they were, by the first of two requests)."""
    with aa.Memory.open(server) as remote:
        big = [lesson(scope, id=f"{tag}_{i}") for i in range(1500)]
        big[1200] = lesson(scope, id=f"{tag}_1200", revision=2**31 - 1)
        with pytest.raises(ValidationError) as caught:
            remote.add_many(big)
        assert caught.value.field == "experiences[1200].revision"
        other = aa.Scope(tenant="globex", app=scope.app, project=scope.project)
        big[1200] = lesson(other, id=f"{tag}_1200")
        with pytest.raises(ForbiddenError, match=r"experiences\[1200\]\.scope\.tenant: 'globex'.*nothing was sent"):
            remote.add_many(big)
        assert remote.lessons(scope=scope) == []
        big[1200] = lesson(scope, id=f"{tag}_1200")
        assert remote.add_many(big) == 1500


def test_a_refused_lesson_in_one_request_is_named_by_the_callers_index(server: str, scope: aa.Scope, tag: str) -> None:
    with aa.Memory.open(server) as remote:
        batch = [lesson(scope, id=f"{tag}_1"), lesson(aa.Scope(tenant="globex", app="a", project="p"), id=f"{tag}_2")]
        with pytest.raises(ForbiddenError, match=r"experiences\[1\]\.scope\.tenant: this key belongs"):
            remote.add_many(batch)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda m, s, i: len(m.search("refund \udcff pending", scope=s)), id="search-surrogate"),
        pytest.param(lambda m, s, i: len(m.search(b"refund", scope=s)), id="search-bytes"),
        pytest.param(lambda m, s, i: len(m.search(None, scope=s)), id="search-none"),
        pytest.param(lambda m, s, i: len(m.reference_block("reset \ud800 email", scope=s)), id="block-surrogate"),
        pytest.param(lambda m, s, i: m.reference_block(b"reset", scope=s), id="block-bytes"),
        pytest.param(lambda m, s, i: m.reference_block("reset", scope=s, max_records=0), id="block-max-records"),
        pytest.param(lambda m, s, i: m.record_outcome(i, scope=s, success=True, key="r-\ud800"), id="key-surr"),
        pytest.param(lambda m, s, i: m.record_outcome(i, scope=s, success=True, key=7), id="key-int"),
        pytest.param(lambda m, s, i: m.record_outcome(i, scope=s, success=True, task=b"x"), id="task-bytes"),
        pytest.param(lambda m, s, i: m.record_outcome("nope", scope=s, success="yes"), id="success-first"),
        pytest.param(lambda m, s, i: m.record_outcome(i, scope=s, success=True, known=3), id="known"),
        pytest.param(
            lambda m, s, i: m.record_outcome(i, scope=s, success=True, task="reset \ud800 mail").wordings,
            id="task-surrogate",
        ),
        pytest.param(lambda m, s, i: m.set_status(i, "revoked", scope=s, reason="r \ud800"), id="reason-surr"),
        pytest.param(lambda m, s, i: m.set_status(i, "revoked", scope=s, reason=5), id="reason-int"),
        pytest.param(lambda m, s, i: m.set_status(i, "bogus", scope=s), id="status-bogus"),
        pytest.param(lambda m, s, i: m.set_status(i, None, scope=s), id="status-none"),
        pytest.param(lambda m, s, i: m.set_status(i, 3, scope=s), id="status-int"),
        pytest.param(lambda m, s, i: m.set_status("nope", "candidate", scope=s), id="status-before-id"),
        pytest.param(
            lambda m, s, i: m.set_status(i, "stale", scope=s, reason="old\n\x1b[2J").status_reason, id="reason"
        ),
        pytest.param(lambda m, s, i: len(m.search("refund", scope=s, k=None)), id="k-none"),
        pytest.param(lambda m, s, i: len(m.search("refund", scope=s, k=True)), id="k-true"),
        pytest.param(lambda m, s, i: len(m.search("refund", scope=s, k="5")), id="k-str"),
        pytest.param(lambda m, s, i: len(m.search("refund", scope=s, k=2.0)), id="k-float"),
    ],
)
def test_a_bad_or_odd_argument_gives_what_a_local_memory_gives(
    pair: tuple[aa.Memory, aa.Memory], scope: aa.Scope, tag: str, call: Callable[[aa.Memory, aa.Scope, str], Any]
) -> None:
    local, remote = pair
    same(local, remote, lambda m: m.add(lesson(scope, id=tag)))
    found = same(local, remote, lambda m: call(m, scope, tag))
    assert found[0] == "ok" or found[1] in ("ValidationError", "NotFoundError")


@pytest.mark.parametrize(("limit", "offset"), [(0, 0), (1, 0), (499, 1), (500, 0), (501, 0), (1200, 3), (10, 5000)])
def test_lessons_takes_any_limit_as_a_local_memory_does(
    pair: tuple[aa.Memory, aa.Memory], scope: aa.Scope, tag: str, limit: int, offset: int
) -> None:
    local, remote = pair
    made = [
        lesson(scope, id=f"{tag}_{i:04}", created_at=datetime(2026, 1, 1, i // 60, i % 60, tzinfo=timezone.utc))
        for i in range(1100)
    ]
    same(local, remote, lambda m: m.add_many(made))
    same(local, remote, lambda m: [item.experience.id for item in m.lessons(scope=scope, limit=limit, offset=offset)])


def test_bad_pages_are_refused_alike(pair: tuple[aa.Memory, aa.Memory], scope: aa.Scope) -> None:
    local, remote = pair
    for limit, offset in ((-1, 0), (5, -1), (2**53 + 1, 0), (5, 2**53 + 1), (True, 0), (5, 1.5)):
        same(local, remote, lambda m, limit=limit, offset=offset: m.lessons(scope=scope, limit=limit, offset=offset))


def test_a_remote_memory_says_what_wait_indexed_and_channel_status_do_not_tell(server: str) -> None:
    """They say nothing about the service: the docstring says so rather than let a script believe it waited."""
    with aa.Memory.open(server) as remote:
        assert remote.wait_indexed(5) is True
        assert remote.channel_status.reason == "not_configured"
    said = " ".join((RemoteMemory.wait_indexed.__doc__ or "").split())
    assert "neither waits for that nor tells whether it is done" in said
    assert "not in its answers" in " ".join((RemoteMemory.channel_status.__doc__ or "").split())
