"""The demo: the learning loop on the embedded store, offline and the same on every machine.

A scripted agent works a refund ticket stuck in pending. Its first attempt (retry) fails on a
held lock and the host's check fails; its second (wait for the lock) issues the refund and
the check passes. afteraction keeps the verified run as a lesson. Then a reworded ticket of
the same kind arrives: the agent receives the lesson in its reference block and gets it
right first time, and its verified run tells the lesson so (one more supporting run, and its
wording to be found by).
"""

from __future__ import annotations

from collections.abc import Callable

from afteraction.memory import Memory
from afteraction.model import Scope
from afteraction.testing import FixedClock, Plan, ScriptedAgent, Transcript

__all__ = ["SCOPE", "run_demo"]

SCOPE = Scope(tenant="demo", app="support", project="refunds", agent="refund-agent")
FIRST_TASK = "Refund ticket 42 is stuck in pending"
SECOND_TASK = "Customer says the refund for ticket 97 is still pending, please fix it"
UNRELATED_TASK = "Book a meeting room for Thursday"
NEXT_TASK = "refund stuck in pending"


class RefundDesk:
    """The offline 'world': a refund whose lock is held by a settlement job. Retrying
    collides with the lock; waiting for it lets the refund through."""

    def __init__(self) -> None:
        self.issued = False

    def run_refund_check(self, strategy: str) -> str:
        if strategy == "retry":
            raise LockHeldError("refund lock is held by the nightly settlement job")
        self.issued = True
        return "issued"


class LockHeldError(RuntimeError):
    pass


def _agent(memory: Memory, desk: RefundDesk) -> ScriptedAgent:
    return ScriptedAgent(
        memory,
        scope=SCOPE,
        env={"os": "linux", "service": "payments"},
        tools={"run_refund_check": desk.run_refund_check},
        plans=[
            Plan((("run_refund_check", {"strategy": "retry"}),), hint="strategy=retry"),
            Plan((("run_refund_check", {"strategy": "wait-for-lock"}),), hint="strategy=wait-for-lock"),
        ],
        check_id="refund-issued",
        check=lambda: desk.issued,
    )


def _print_run(echo: Callable[[str], None], number: int, transcript: Transcript) -> None:
    echo(f"── Run {number}: {transcript.task}")
    echo(f"   reference block: {'received' if transcript.block else 'none'}")
    for step in transcript.steps:
        args = ", ".join(f"{k}={v}" for k, v in step.args.items())
        outcome = f"error {step.error}" if step.error else f"→ {step.result}"
        echo(f"   attempt {step.attempt}: {step.tool}({args}) {outcome}")
    echo(f"   check refund-issued: {'passed' if transcript.passed else 'failed'}")
    if transcript.experience is not None:
        e = transcript.experience
        echo(f"   stored lesson {e.id} ({e.status.label}, confidence {e.confidence:.2f})")
    echo("")


def run_demo(memory: Memory, echo: Callable[[str], None], *, db: str | None = None) -> None:
    """Run the demo against ``memory`` (its clock should be fixed for a stable output);
    ``db`` is where it is stored, for the closing hint."""
    first = _agent(memory, RefundDesk()).run(FIRST_TASK, run_id="demo-run-1")
    _print_run(echo, 1, first)
    if first.experience is not None:
        echo("── The stored lesson")
        echo(f"   {first.experience.lesson}")
        echo(f"   {first.experience.summary}")
        echo("")
    memory.wait_indexed(DEMO_BUDGET)  # the lesson's vector is written in the background
    second = _agent(memory, RefundDesk()).run(SECOND_TASK, run_id="demo-run-2")
    echo("── The block run 2 received")
    echo(second.block.rstrip("\n") if second.block else "(none)")
    echo("")
    _print_run(echo, 2, second)
    if first.experience is not None and first.experience.id in second.given:
        helped = memory.get(first.experience.id, scope=SCOPE)
        echo("── What run 2 told the lesson it was given")
        echo(
            f"   {helped.id}: {helped.status.label}, confidence {first.experience.confidence:.2f} → "
            f"{helped.confidence:.2f} ({helped.supporting} supporting runs)"
        )
        for wording in helped.wordings:
            echo(f"   now also found by: {wording}")
        echo("")
    memory.wait_indexed(DEMO_BUDGET)
    echo(f"── The block the next request ({NEXT_TASK!r}) gets: run 2's lesson counted, not repeated")
    echo(memory.reference_block(NEXT_TASK, scope=SCOPE).rstrip("\n") or "(none)")
    echo("")
    unrelated = memory.reference_block(UNRELATED_TASK, scope=SCOPE)
    echo(f"── An unrelated task ({UNRELATED_TASK!r}) gets {'a block' if unrelated else 'no block'}.")
    if db is not None:
        scope = " ".join(f"--scope {key}={value}" for key, value in SCOPE.to_dict().items())
        echo("")
        echo(f"Try it: afteraction block {NEXT_TASK!r} {scope} --db {db}")


#: The demo waits for the embedding model to load on its first search, so both channels always run
#: and its output is the same every time (an agent host keeps the library's 0.5 s budget).
DEMO_BUDGET = 30.0


def demo_memory(url: str) -> Memory:
    """A memory for the demo: the given store, a fixed clock, the ``strategy`` argument kept."""
    return Memory.open(url, clock=FixedClock(), allow_args=("strategy",), vector_budget=DEMO_BUDGET)
