"""RunRecorder: the direct recording API (``with mem.run(...) as run:``; in async code
``async with amem.run(...) as run:``, which finishes in the async face's threads).

Recording is cheap in the agent's thread (an append under a lock); sanitizing (the task and
check details too), verifying, distilling and storing happen once, at ``finish``: a second
finish, even one that overlaps the first, returns the first's result. Nothing here raises into
the agent: every failure goes to ``on_error`` and the run simply teaches nothing. A block left by
an interrupt or a cancellation (not an ``Exception``) abandons the run: it was stopped, not done.

The run also closes the loop for the lessons it was given (``run.reference_block()`` or
``run.search()``): when ``finish`` has stored it, each gets this run's verdict as one reuse
outcome (``afteraction.feedback``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

from afteraction.core.capture import clean_call, clean_name, clean_skill, clean_task, clean_text
from afteraction.core.distill import distill
from afteraction.core.render import Layout
from afteraction.core.sanitize import Limits, scrub_text, trimmed
from afteraction.core.verify import Verifier, is_verdict, verify
from afteraction.errors import ValidationError
from afteraction.feedback import feed_back
from afteraction.model import Attempt, Evidence, Experience, Hit, Run, Scope, Skill, ToolCall, Verdict
from afteraction.recording import RawAttempt, RawCall, error_text, finish_deadline, shown, text_of
from afteraction.reporting import ErrorHandler, deliver, log_error

if TYPE_CHECKING:
    from afteraction.memory import Memory
    from afteraction.memory_async import AsyncMemory

__all__ = ["ErrorHandler", "RunRecorder", "deliver", "log_error"]

#: What a finish resolves to: the stored Experience, or None.
Outcome = Future[Experience | None]


class RunRecorder:
    """Collects one run. Use it as a context manager, or call ``finish()`` yourself."""

    def __init__(
        self,
        memory: Memory,
        *,
        run_id: str,
        task: str,
        scope: Scope,
        env: Mapping[str, str],
        verifiers: Sequence[Verifier],
        allow_args: Sequence[str],
        skill: Skill | None,
        limits: Limits,
        on_error: ErrorHandler,
        started_at: datetime,
        feedback: bool = True,
    ) -> None:
        self.id = run_id
        self._raw_task: str | None = task  # scrubbed when first read (a worker thread, in the async face)
        self._task = ""
        self.scope = scope
        self._memory = memory
        self._env = dict(env)
        self._verifiers = tuple(verifiers)
        self._allow = tuple(allow_args)
        self._skill = clean_skill(skill)
        self._limits = limits
        self._on_error = on_error
        self._started_at = started_at
        self._lock = threading.Lock()
        self._attempts: list[RawAttempt] = [RawAttempt()]
        self._checks: list[tuple[str, bool, str]] = []  # name, passed, detail (scrubbed at finish)
        self._abstained = False
        self._attempts_refused = 0
        self._done = False  # no more recording
        self._outcome: Outcome | None = None  # set by the first finish (or abandon), resolved when it ends
        self._finisher: int | None = None  # the thread running that finish
        self._result: Experience | None = None
        self._aio: AsyncMemory | None = None  # the async face that made this run (``async with`` finishes there)
        self._feedback = feedback
        self._given: dict[str, Experience] = {}  # the lessons this run was given, by id, in order
        self._copies: dict[str, tuple[Experience, ...]] = {}  # the copies of a given lesson's fix a block hid

    @property
    def task(self) -> str:
        """The task as stored: whitespace folded, secrets scrubbed, cut at the limit (done at first read)."""
        raw = self._raw_task
        if raw is not None:
            self._task, self._raw_task = clean_task(raw, self._limits), None  # a race computes the same text
        return self._task

    # -- recording (the agent's thread: cheap, never raises) -----------------------------

    def tool(
        self,
        tool: str,
        *,
        args: Mapping[str, Any] | None = None,
        result: Any = None,
        error: str | BaseException | None = None,
        call_id: str | None = None,
    ) -> None:
        """Record one tool call with its result, or its error (text or exception).

        Calling a tool again after it failed in this attempt starts a new attempt, so a
        retry loop without ``next_attempt()`` still reads as attempts in the lesson."""
        try:
            self._tool(tool, args, result, None if error is None else error_text(error), call_id)
        except Exception as exc:  # the host's clock failed, say: reported, never raised into the agent
            self._report(exc, "run.tool")

    def _tool(self, tool: object, args: Any, result: Any, error: str | None, call_id: object) -> None:
        name = text_of(tool)
        at = self._memory.now()
        with self._lock:
            if self._done:
                return
            attempt = self._attempts[-1]
            if name in attempt.failed_tools:  # the tool that failed is tried again: that is a new attempt
                if len(self._attempts) < self._limits.max_attempts:
                    attempt = RawAttempt()
                    self._attempts.append(attempt)
                else:
                    self._attempt_refused()
            if len(attempt.calls) >= self._limits.max_calls:
                attempt.refused += 1
                if attempt.refused == 1:
                    self._report(
                        ValidationError(
                            f"attempts[{len(self._attempts) - 1}].calls",
                            f"more than {self._limits.max_calls} tool calls in one attempt; the rest are not recorded",
                        ),
                        "run.tool",
                    )
                return
            where = f"attempts[{len(self._attempts) - 1}].calls[{len(attempt.calls)}].tool"
            known = call_id if call_id is None or type(call_id) is str else text_of(call_id)
            attempt.calls.append(RawCall(name, args, result, error, known, at))
            if error is not None:
                attempt.failed_tools.add(name)
        if not isinstance(tool, str):
            self._report(
                ValidationError(where, f"must be a string, got {type(tool).__name__}; kept as text"), "run.tool"
            )

    def next_attempt(self) -> None:
        """The task is being tried again: later tool calls belong to a new attempt."""
        with self._lock:
            if self._done:
                return
            if len(self._attempts) >= self._limits.max_attempts:
                self._attempt_refused("run.next_attempt")
                return
            self._attempts.append(RawAttempt())

    def _attempt_refused(self, where: str = "run.tool") -> None:
        """An attempt past the limit: its calls join the last one; reported once, as calls past theirs are."""
        self._attempts_refused += 1
        if self._attempts_refused == 1:
            rule = f"more than {self._limits.max_attempts} attempts; later calls join the last one"
            self._report(ValidationError("attempts", rule), where)

    def fail(self, error: str | BaseException) -> None:
        """The current attempt failed as a whole (it raised, or gave up)."""
        text = error_text(error)  # never raises, even when the exception's own ``__str__`` does
        with self._lock:
            if not self._done:
                self._attempts[-1].error = text

    def check(self, id: str, passed: bool | None, detail: str = "") -> None:
        """The host's own check: True passes, False fails, None means *do not store this run*. Any
        other answer is reported and stores nothing either (``"false"`` is truthy: read as an answer, a
        failed check would be stored as a pass)."""
        try:
            name = clean_name(text_of(id))
            answer = bool(passed) if passed is not None and is_verdict(passed) else None
            note = "" if detail is None or answer is None else trimmed(text_of(detail), 500)[0]
        except Exception as exc:
            self._report(exc, "run.check")
            return
        with self._lock:
            if self._done:
                return
            if answer is None:
                self._abstained = True
            else:
                self._checks.append((name, answer, note))
                if not answer:
                    self._attempts[-1].failed_checks.append(name)
        if answer is None and passed is not None:
            rule = f"must be True, False or None, got {shown(passed):.40}; the run is not stored"
            self._report(ValidationError(f"checks[{name:.60}].passed", rule), "run.check")

    # -- what the run is given (the agent's thread: never raises) ------------------------

    def search(self, *, k: int = 5) -> list[Hit]:
        """``Memory.search`` for this run's task, scope and environment; the lessons found count
        as given to the run. [] when memory fails (``on_error`` hears why). Off the event loop:
        ``await amem.search_for(run)``."""
        try:
            hits = self._memory.search(self.task, scope=self.scope, k=k, env=self._env)
        except Exception as exc:
            self._report(exc, "run.search")
            return []
        self._was_given(hits)
        return hits

    def reference_block(
        self,
        *,
        layout: Layout | None = None,
        max_records: int | None = None,
        max_bytes: int | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """``Memory.reference_block`` for this run's task, scope and environment; the lessons in
        the block count as given to the run. "" when memory fails (``on_error`` hears why). Off the
        event loop: ``await amem.block_for(run)``."""
        try:
            options = self._memory.block_options.with_(
                layout=layout, max_records=max_records, max_bytes=max_bytes, max_tokens=max_tokens
            )
            block, shown, copies = self._memory._block(self.task, self.scope, self._env, options)
        except Exception as exc:
            self._report(exc, "run.reference_block")
            return ""
        self._was_given(shown, copies)
        return block

    @property
    def given(self) -> tuple[str, ...]:
        """Ids of the lessons this run was given so far, in the order it first got them."""
        with self._lock:
            return tuple(self._given)

    def _was_given(self, hits: Sequence[Hit], copies: Sequence[tuple[Experience, ...]] = ()) -> None:
        """``hits`` count as given to the run; ``copies`` (beside each hit, when a block showed it for
        a group) are the copies of its fix that a failure of the run also speaks against."""
        with self._lock:
            if not self._done:
                for n, hit in enumerate(hits):
                    self._given.setdefault(hit.id, hit.experience)
                    if n < len(copies) and copies[n]:
                        self._copies.setdefault(hit.id, copies[n])

    # -- finishing -----------------------------------------------------------------------

    def abandon(self) -> None:
        """Drop the run: nothing is stored (unless a finish is under way already)."""
        with self._lock:
            self._done = True
            if self._outcome is None:
                self._outcome = Outcome()
                self._outcome.set_running_or_notify_cancel()
                self._outcome.set_result(None)

    def finish(self) -> Experience | None:
        """Verify, distill and store, once. The stored Experience, or None when there was no
        verdict (or memory failed, which ``on_error`` heard about). A finish while another one
        is under way (another thread's, or one whose ``await`` was cancelled) waits for it and
        returns its result."""
        outcome, work = self._claim()
        if work is not None:
            work()
        elif not outcome.done() and self._finisher == threading.get_ident():
            return self._result  # called again from inside the finish (an on_error handler): never wait on itself
        return outcome.result()

    def _claim(self) -> tuple[Outcome, Callable[[], None] | None]:
        """The finish's outcome, and the work that resolves it when this caller is the first to finish."""
        with self._lock:
            if self._outcome is not None:
                return self._outcome, None
            self._done = True
            self._outcome = outcome = Outcome()
            outcome.set_running_or_notify_cancel()  # a waiter's cancelled await never cancels the finish
        return outcome, lambda: self._complete(outcome)

    def _complete(self, outcome: Outcome) -> None:
        self._finisher = threading.get_ident()
        try:
            self._finish()
        finally:
            outcome.set_result(self._result)

    def _finish(self) -> None:
        try:
            run = self.to_run()
            verdict = None if self._abstained else verify(run, self._verifiers)  # the host's checks take their time
            if verdict is None:
                return
            experience = distill(run, verdict, self._memory.now(), skill=self._skill)
        except Exception as exc:
            self._report(exc, "run.finish")
            return
        with finish_deadline(self._memory):  # a remote memory's: the lesson and the outcomes wait `timeout` in all
            try:
                self._result = self._memory._store_finished(experience)
            except Exception as exc:
                self._report(exc, "run.finish")
                return
            self._feed_back(verdict, run)

    def _feed_back(self, verdict: Verdict, run: Run) -> None:
        if self._feedback:
            own = None if self._result is None else self._result.id
            with self._lock:
                known, copies = dict(self._given), dict(self._copies)
            feed_back(self._memory, known, run, passed=verdict.passed, own=own, report=self._report, copies=copies)

    def to_run(self) -> Run:
        """The run as recorded so far, sanitized (secrets redacted, values cut at the limits)."""
        attempts: list[Attempt] = []
        checks = list(self._checks)
        for index, raw in enumerate(self._attempts):
            calls = tuple(self._sanitized_call(index, n, call) for n, call in enumerate(raw.calls))
            error = None if raw.error is None else clean_text(raw.error, self._limits)
            superseded = index < len(self._attempts) - 1
            if error is None and superseded and raw.failed_checks and not any(c.error for c in calls):
                error = f"CheckFailed: {', '.join(raw.failed_checks)}"
            attempts.append(Attempt(index, calls, error))
        return Run(
            id=self.id,
            task=self.task,
            scope=self.scope,
            started_at=self._started_at,
            attempts=tuple(attempts),
            env=self._env,
            ended_at=self._memory.now(),
            state="completed",
            evidence=tuple(Evidence(name, passed, "check", scrub_text(text)[:500]) for name, passed, text in checks),
        )

    def _sanitized_call(self, attempt: int, n: int, call: RawCall) -> ToolCall:
        clean, problems = clean_call(
            call.tool,
            call.args,
            call.result,
            call.error,
            call_id=call.call_id,
            at=call.at,
            where=f"attempts[{attempt}].calls[{n}]",
            allow=self._allow,
            limits=self._limits,
        )
        for problem in problems:
            self._report(problem, "run.tool")
        return clean

    def _report(self, exc: BaseException, where: str) -> None:
        deliver(self._on_error, exc, where, self._memory._loop)

    # -- context manager -----------------------------------------------------------------

    def __enter__(self) -> RunRecorder:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Finishes in this thread: in async code, ``async with`` finishes off the event loop. The block's
        exception propagates unchanged."""
        if self._left(exc):
            self.finish()

    async def __aenter__(self) -> RunRecorder:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """As leaving a ``with`` block, with the finish run by the async face's threads."""
        if self._left(exc):
            await (self._aio or self._memory.aio).finish(self)

    def _left(self, exc: BaseException | None) -> bool:
        """The block was left with ``exc``: whether to finish the run. An interrupt or a cancellation (a
        BaseException that is not an Exception) abandons it: the run was stopped, not done, so it teaches
        nothing; an Exception is the attempt's failure."""
        if exc is None:
            return True
        if not isinstance(exc, Exception):
            self.abandon()
            return False
        self.fail(exc)
        return True

    @property
    def experience(self) -> Experience | None:
        """What ``finish`` stored, if anything."""
        return self._result
