"""Test doubles shipped with the library: a scripted agent, a fixed clock, record builders.

Nothing here touches the network or needs a key; the demo and the test suite use them, and so
can a host's own tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from afteraction.core.ids import derive_id, experience_id
from afteraction.core.verify import Verifier
from afteraction.memory import Memory
from afteraction.model import Experience, Scope, Status

__all__ = ["FixedClock", "Plan", "ScriptedAgent", "Step", "Transcript", "make_experience"]

EPOCH = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)


class FixedClock:
    """A clock that starts at ``start`` and advances ``step`` on every reading."""

    def __init__(self, start: datetime = EPOCH, step: timedelta = timedelta(seconds=1)) -> None:
        self.current = start
        self.step = step

    def __call__(self) -> datetime:
        now = self.current
        self.current = now + self.step
        return now


@dataclass(frozen=True, slots=True)
class Plan:
    """One way to attempt a task: tool calls in order. ``hint`` is the text that, when it
    appears in the reference block, makes the agent try this plan first."""

    calls: tuple[tuple[str, Mapping[str, Any]], ...]
    hint: str = ""


@dataclass(slots=True)
class Step:
    attempt: int
    tool: str
    args: Mapping[str, Any]
    result: Any = None
    error: str | None = None


@dataclass(slots=True)
class Transcript:
    task: str
    block: str
    steps: list[Step] = field(default_factory=list)
    passed: bool = False
    experience: Experience | None = None
    given: tuple[str, ...] = ()


class ScriptedAgent:
    """An offline agent whose model is a script. For each task it reads the reference block,
    puts first the plan whose ``hint`` the block mentions (as a model following a lesson
    would), and tries plans one attempt each until the host's check passes."""

    def __init__(
        self,
        memory: Memory,
        *,
        scope: Scope,
        tools: Mapping[str, Callable[..., Any]],
        plans: Sequence[Plan],
        check_id: str,
        check: Callable[[], bool],
        env: Mapping[str, str] | None = None,
        verify: Sequence[Verifier] = (),
    ) -> None:
        self.memory = memory
        self.scope = scope
        self.tools = dict(tools)
        self.plans = list(plans)
        self.check_id = check_id
        self.check = check
        self.env = dict(env or {})
        self.verify = tuple(verify)

    def run(self, task: str, *, run_id: str | None = None) -> Transcript:
        with self.memory.run(task, scope=self.scope, env=self.env, verify=self.verify, run_id=run_id) as rec:
            block = rec.reference_block()  # through the run: its lessons get its verdict
            plans = sorted(self.plans, key=lambda p: 0 if p.hint and p.hint in block else 1)
            transcript = Transcript(task=task, block=block)
            for attempt, plan in enumerate(plans):
                if attempt:
                    rec.next_attempt()
                for tool, args in plan.calls:
                    step = Step(attempt, tool, args)
                    try:
                        step.result = self.tools[tool](**args)
                    except Exception as exc:
                        step.error = f"{type(exc).__name__}: {exc}"
                    rec.tool(tool, args=args, result=step.result, error=step.error)
                    transcript.steps.append(step)
                    if step.error is not None:
                        break
                transcript.passed = self.check()
                rec.check(self.check_id, passed=transcript.passed)
                if transcript.passed:
                    break
        transcript.experience = rec.experience
        transcript.given = rec.given
        return transcript


def make_experience(
    task: str,
    lesson: str = "Verified after 1 attempt. Worked: attempt 0. Checks: [done].",
    *,
    scope: Scope,
    id: str | None = None,
    status: Status = Status.VALIDATED,
    confidence: float = 2 / 3,
    created_at: datetime = EPOCH,
    summary: str = "",
    **fields: Any,
) -> Experience:
    """An Experience with sensible defaults: its run id derived from the task and scope, its id from
    that run id and the scope, as a distilled lesson's is (``core.ids.experience_id``)."""
    run_id = fields.pop("task_id", None) or (
        id.replace("exp_", "run_") if id else derive_id("run", scope.tenant, scope.app, scope.project, task)
    )
    return Experience(
        id=id or experience_id(run_id, scope),
        task_id=run_id,
        task=task,
        lesson=lesson,
        status=status,
        confidence=confidence,
        scope=scope,
        created_at=created_at,
        summary=summary,
        **fields,
    )
