"""afteraction: verified experience for AI agents.

Observe agent runs, keep only the runs the host's own checks verified, distill each into a
lesson, and hand the relevant lessons to the next run of a similar task as a bounded,
clearly labelled reference block.

    import afteraction as aa

    mem = aa.Memory.open()
    scope = aa.Scope(tenant="acme", app="support", project="refunds")
    with mem.run("Refund ticket 42 is stuck in pending", scope=scope) as run:
        run.tool("run_refund_check", args={"strategy": "retry"}, error="LockHeldError: lock held")
        run.next_attempt()
        run.tool("run_refund_check", args={"strategy": "wait-for-lock"}, result="issued")
        run.check("refund-issued", passed=True)
    block = mem.reference_block("refund stuck in pending", scope=scope)
"""

from afteraction.core import verify
from afteraction.core.errorclass import error_class
from afteraction.core.rank import Weights
from afteraction.core.render import BlockOptions
from afteraction.core.sanitize import Limits
from afteraction.core.tasktext import task_text
from afteraction.errors import (
    AfterActionError,
    AppendOnlyError,
    AuthError,
    ConfigError,
    ConflictError,
    EmbedderError,
    ForbiddenError,
    NotFoundError,
    StoreError,
    ValidationError,
)
from afteraction.identity import Identity, development_identity, fixed_identity
from afteraction.memory import AsyncMemory, Memory
from afteraction.model import (
    Attempt,
    Event,
    Evidence,
    Experience,
    Hit,
    Lesson,
    Run,
    Scenario,
    Scope,
    Skill,
    Solution,
    Status,
    ToolCall,
    Tried,
    Verdict,
)
from afteraction.recorder import RunRecorder

__version__ = "0.1.0"

__all__ = [
    "AfterActionError",
    "AppendOnlyError",
    "AsyncMemory",
    "Attempt",
    "AuthError",
    "BlockOptions",
    "ConfigError",
    "ConflictError",
    "EmbedderError",
    "Event",
    "Evidence",
    "Experience",
    "ForbiddenError",
    "Hit",
    "Identity",
    "Lesson",
    "Limits",
    "Memory",
    "NotFoundError",
    "Run",
    "RunRecorder",
    "Scenario",
    "Scope",
    "Skill",
    "Solution",
    "Status",
    "StoreError",
    "ToolCall",
    "Tried",
    "ValidationError",
    "Verdict",
    "Weights",
    "development_identity",
    "error_class",
    "fixed_identity",
    "task_text",
    "verify",
]
