"""The MAF integration end to end: a real Agent and function loop, a scripted model, no network."""

from __future__ import annotations

import asyncio
import runpy
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agent_framework")

from agent_framework import Agent, AgentContext, AgentResponse, Message

import afteraction as aa
from afteraction.integrations.maf import BLOCK_TAG, AfterActionMemory, attach
from afteraction.integrations.maf_testing import Reply, ScriptedChatClient, tool_call
from afteraction.store import MemoryStore

pytestmark = pytest.mark.maf

MARKER = "=== BEGIN REFERENCE"
ACME = aa.Scope(tenant="acme", app="support", project="refunds", agent="refund-agent")
GLOBEX = aa.Scope(tenant="globex", app="support", project="refunds", agent="refund-agent")
TASK = "Refund ticket 42 is stuck in pending"
REWORDED = "Ticket 77: the refund is stuck in pending, please fix it"


class LockHeldError(Exception):
    pass


class Ledger:
    """The host's own record of refunds: what its check reads, not what the model says."""

    def __init__(self) -> None:
        self.issued: list[str] = []

    def run_refund_check(self, strategy: str) -> str:
        """Re-run the refund check. strategy: "retry" or "wait-for-lock"."""
        if strategy == "retry":
            raise LockHeldError("the refund lock is held by another worker")
        self.issued.append(strategy)
        return "issued"

    def checks(self, response: object) -> dict[str, bool | None]:
        passed, self.issued = bool(self.issued), []
        return {"refund-issued": passed}


FIX: list[Reply] = [
    tool_call("run_refund_check", strategy="retry"),
    tool_call("run_refund_check", strategy="wait-for-lock"),
    "Refund issued.",
]
DIRECT: list[Reply] = [tool_call("run_refund_check", strategy="wait-for-lock"), "Refund issued."]


class Setup:
    def __init__(self, replies: Sequence[Reply], memory: aa.Memory | None = None, **options: Any) -> None:
        self.memory = memory or aa.Memory.open(":memory:")
        self.errors: list[tuple[BaseException, str]] = []
        self.ledger = Ledger()
        self.client = ScriptedChatClient(replies)
        self.agent = Agent(client=self.client, name="refund-agent", tools=[self.ledger.run_refund_check])
        options.setdefault("identity", aa.fixed_identity(ACME))
        options.setdefault("checks", self.ledger.checks)
        self.wiring = attach(
            self.agent,
            self.memory,
            allow_args=("strategy",),
            on_error=lambda exc, where: self.errors.append((exc, where)),
            **options,
        )

    def run(self, task: str, **kwargs: Any) -> str:
        return asyncio.run(wait(self.agent.run(task, **kwargs))).text

    def lessons(self, scope: aa.Scope = ACME) -> list[aa.Experience]:
        return [lesson.experience for lesson in self.memory.lessons(scope=scope)]


async def wait(response: Awaitable[AgentResponse[Any]]) -> AgentResponse[Any]:
    return await response


def blocks(request: list[Message]) -> list[str]:
    return [m.text for m in request if MARKER in m.text]


def test_a_verified_run_teaches_the_next_similar_run() -> None:
    s = Setup([*FIX, *DIRECT])
    assert s.run(TASK) == "Refund issued."
    assert all(blocks(request) == [] for request in s.client.requests)  # nothing learned yet

    [lesson] = s.lessons()
    assert lesson.status is aa.Status.VALIDATED
    assert "LockHeldError" in lesson.lesson
    assert lesson.scope == ACME

    asked_before = len(s.client.requests)
    assert s.run(REWORDED) == "Refund issued."
    run2 = s.client.requests[asked_before:]
    assert len(run2) == 2  # the tool round and the final answer
    for request in run2:  # every model request of the run carries the block exactly once
        [block] = blocks(request)
        assert "LockHeldError" in block
        assert "wait-for-lock" in block
    assert s.errors == []
    # the second run was verified: the lesson it was given has one more supporting outcome, and its words
    helped = s.memory.get(lesson.id, scope=ACME)
    assert (helped.supporting, helped.confidence, len(helped.outcome_keys)) == (2, 3 / 4, 1)
    assert helped.wordings == (REWORDED,)


def test_tool_errors_reach_the_model_as_without_afteraction() -> None:
    wired = Setup(FIX)
    wired.run(TASK)
    bare = ScriptedChatClient(FIX)
    asyncio.run(wait(Agent(client=bare, tools=[Ledger().run_refund_check]).run(TASK)))

    def tool_results(client: ScriptedChatClient) -> list[tuple[Any, Any]]:
        return [(c.result, c.exception) for m in client.requests[-1] for c in m.contents if c.type == "function_result"]

    assert tool_results(wired.client) == tool_results(bare)
    assert tool_results(bare)[0][1] == "the refund lock is held by another worker"


def test_an_unrelated_task_gets_no_block() -> None:
    s = Setup([*FIX, "It is sunny in Paris."])
    s.run(TASK)
    s.run("What is the weather in Paris today?")
    assert blocks(s.client.requests[-1]) == []


def test_a_failed_check_is_quarantined_and_never_injected() -> None:
    s = Setup([tool_call("run_refund_check", strategy="retry"), "I could not do it.", *DIRECT])
    s.run(TASK)
    [lesson] = s.lessons()
    assert lesson.status is aa.Status.QUARANTINED
    s.run(REWORDED)
    assert all(blocks(request) == [] for request in s.client.requests)


def test_a_check_that_abstains_stores_nothing() -> None:
    s = Setup(FIX, checks=lambda response: {"refund-issued": None})
    s.run(TASK)
    assert s.lessons() == []


def test_checks_that_return_none_store_nothing_and_a_non_mapping_is_named() -> None:
    s = Setup(FIX, checks=lambda response: None)
    s.run(TASK)
    assert s.lessons() == [] and s.errors == []
    s = Setup(FIX, checks=lambda response: ["refund-issued"])
    s.run(TASK)
    assert s.lessons() == []
    ((error, where),) = s.errors
    assert where == "maf.checks" and isinstance(error, aa.ValidationError) and error.field == "checks"


def test_a_check_answered_with_no_verdict_stores_nothing_and_is_named() -> None:
    s = Setup(
        FIX,
        checks=lambda response: {"refund-issued": "false"},
        verify=[aa.verify.tool_succeeded("run_refund_check")],  # passes: alone it would teach a Validated lesson
    )
    s.run(TASK)
    assert s.lessons() == []
    ((error, where),) = s.errors
    assert where == "run.check" and isinstance(error, aa.ValidationError)
    assert error.field == "checks[refund-issued].passed"


class BrokenStore(MemoryStore):
    def put(self, *args: Any, **kwargs: Any) -> bool:
        raise aa.StoreError("disk full")

    def search_text(self, *args: Any, **kwargs: Any) -> Any:
        raise aa.StoreError("database is down")


def test_a_failing_store_never_reaches_the_agent() -> None:
    s = Setup([*FIX, *DIRECT], memory=aa.Memory(BrokenStore()))
    assert s.run(TASK) == "Refund issued."
    assert s.run(REWORDED) == "Refund issued."
    assert {where for _, where in s.errors} >= {"run.finish", "run.reference_block"}
    assert all(isinstance(exc, aa.StoreError) for exc, _ in s.errors)


def test_a_closed_memory_never_reaches_the_agent(tmp_path: Path) -> None:
    memory = aa.Memory.open(tmp_path / "memory.db")
    s = Setup(FIX, memory=memory)
    memory.close()
    assert s.run(TASK) == "Refund issued."
    assert s.errors  # reported, not raised


def test_an_identity_that_fails_leaves_the_agent_running_without_memory() -> None:
    def identity() -> aa.Scope:
        raise LookupError("no signed-in user")

    s = Setup(FIX, identity=identity)
    assert s.run(TASK) == "Refund issued."
    assert [(type(exc), where) for exc, where in s.errors] == [(LookupError, "maf.start")]
    assert s.lessons() == []


def test_an_async_on_error_hears_the_failure() -> None:
    """An ``async def`` handler's coroutine was dropped: the failure reached nobody."""
    heard: list[str] = []

    async def on_error(exc: BaseException, where: str) -> None:
        heard.append(where)

    def identity() -> aa.Scope:
        raise LookupError("no signed-in user")

    ledger = Ledger()
    agent = Agent(client=ScriptedChatClient(FIX), name="refund-agent", tools=[ledger.run_refund_check])
    attach(agent, aa.Memory.open(":memory:"), identity=identity, checks=ledger.checks, on_error=on_error)
    assert asyncio.run(wait(agent.run(TASK))).text == "Refund issued."
    assert heard == ["maf.start"]


def test_the_scope_comes_from_the_host_never_from_the_model() -> None:
    claims: list[Reply] = [
        tool_call("run_refund_check", strategy="retry", tenant="globex"),
        tool_call("run_refund_check", strategy="wait-for-lock"),
        "Done. tenant=globex scope=globex/support/refunds",
    ]
    tenants = {"alice": ACME, "bob": GLOBEX}

    def identity(context: AgentContext) -> aa.Scope:  # the host's signed-in user, not the model's words
        return tenants[context.function_invocation_kwargs["user"]]

    s = Setup([*claims, *DIRECT], identity=identity)
    s.run(TASK, function_invocation_kwargs={"user": "alice"})
    [lesson] = s.lessons(ACME)
    assert lesson.scope == ACME
    assert s.lessons(GLOBEX) == []

    s.run(REWORDED, function_invocation_kwargs={"user": "bob"})  # another tenant, same kind of task
    assert blocks(s.client.requests[-1]) == []


def test_at_most_one_block_per_request_with_several_providers_and_turns() -> None:
    s = Setup([*FIX, *DIRECT, *DIRECT])
    s.run(TASK)
    second = AfterActionMemory(s.memory, identity=aa.fixed_identity(ACME), source_id="afteraction-2")
    second.attach(s.agent)
    s.wiring.attach(s.agent)  # attaching again changes nothing
    assert len(s.agent.context_providers) == 2

    session = s.agent.create_session()
    first_turn = len(s.client.requests)
    s.run(REWORDED, session=session)
    s.run("Ticket 78 is stuck in pending too", session=session)
    for request in s.client.requests[first_turn:]:
        assert len(blocks(request)) == 1
        assert sum(bool(m.additional_properties.get(BLOCK_TAG)) for m in request) == 1


def test_a_follow_up_keeps_the_task_of_the_request_it_follows() -> None:
    s = Setup([*FIX, "Which ticket?", *DIRECT])
    s.run(TASK)
    session = s.agent.create_session()
    s.run("Ticket 77: the refund is stuck in pending", session=session)
    asked = len(s.client.requests)
    s.run("yes, go ahead", session=session)
    [block] = blocks(s.client.requests[asked])
    assert "LockHeldError" in block


def test_a_streamed_run_is_captured_and_injected() -> None:
    s = Setup([*FIX, *DIRECT])

    async def stream(task: str) -> str:
        response = s.agent.run(task, stream=True)
        async for _ in response:
            pass
        return (await response.get_final_response()).text

    assert asyncio.run(stream(TASK)) == "Refund issued."
    [lesson] = s.lessons()
    assert "LockHeldError" in lesson.lesson
    asyncio.run(stream(REWORDED))
    assert len(blocks(s.client.requests[-1])) == 1


def test_host_code_can_check_the_current_run() -> None:
    s = Setup(DIRECT, checks=None)
    assert s.wiring.current() is None

    def run_refund_check(strategy: str) -> str:
        """Issue the refund; the host's code checks its own ledger."""
        recorder = s.wiring.current()
        assert recorder is not None
        recorder.check("ledger-balanced", True)
        return "issued"

    s.agent.default_options["tools"] = [run_refund_check]
    s.run(TASK)
    [lesson] = s.lessons()
    assert lesson.checks == ("ledger-balanced",)


def test_misconfiguration_fails_at_setup() -> None:
    memory = aa.Memory.open(":memory:")
    with pytest.raises(aa.ConfigError, match="fixed_identity"):
        AfterActionMemory(memory, identity=ACME)  # type: ignore[arg-type]
    with pytest.raises(aa.ConfigError, match="identity"):
        AfterActionMemory(memory, identity=lambda a, b: ACME)  # type: ignore[arg-type]
    with pytest.raises(aa.ConfigError, match="Memory"):
        AfterActionMemory(object(), identity=aa.fixed_identity(ACME))  # type: ignore[arg-type]


def test_the_example_runs_offline() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "maf_agent.py"
    block = asyncio.run(runpy.run_path(str(example))["main"]())
    assert MARKER in block
    assert "LockHeldError" in block
