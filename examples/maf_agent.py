"""A Microsoft Agent Framework agent that learns from its verified runs. Offline: a scripted model.

Run it with ``python examples/maf_agent.py``.
"""

from __future__ import annotations

import asyncio

from agent_framework import Agent

import afteraction as aa
from afteraction.integrations.maf import attach
from afteraction.integrations.maf_testing import ScriptedChatClient, tool_call


class LockHeldError(Exception):
    pass


def run_refund_check(ticket: str, strategy: str) -> str:
    """Re-run the refund check of a ticket. strategy: "retry" or "wait-for-lock"."""
    if strategy == "retry":
        raise LockHeldError("the refund lock is held by another worker")
    return "issued"


async def main() -> str:
    # What a model might answer, offline. In production: any MAF chat client.
    model = ScriptedChatClient(
        [
            tool_call("run_refund_check", ticket="42", strategy="retry"),
            tool_call("run_refund_check", ticket="42", strategy="wait-for-lock"),
            "Refund 42 issued.",
            tool_call("run_refund_check", ticket="77", strategy="wait-for-lock"),
            "Refund 77 issued.",
        ]
    )
    agent = Agent(client=model, name="refund-agent", tools=[run_refund_check])

    memory = aa.Memory.open(":memory:")
    memory.wait_indexed(5)  # a one-off script: let the bundled model load before the first search
    scope = aa.Scope(tenant="acme", app="support", project="refunds", agent="refund-agent")
    attach(
        agent,
        memory,
        identity=aa.fixed_identity(scope),  # the host says who this is; the model never does
        verify=[aa.verify.tool_succeeded("run_refund_check")],  # the host's own check
        allow_args=("strategy",),  # argument values worth keeping; others are stored as [omitted]
    )

    await agent.run("Refund ticket 42 is stuck in pending")  # fails once, then works: a lesson
    memory.wait_indexed(5)  # a one-off script: the lesson is embedded before the next run searches
    await agent.run("Ticket 77: the refund is stuck in pending")  # gets that lesson as reference
    return next(m.text for m in model.requests[-2] if "BEGIN REFERENCE" in m.text)


if __name__ == "__main__":
    print(asyncio.run(main()))
