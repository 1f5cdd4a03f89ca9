"""Microsoft Agent Framework (MAF): capture each agent run and inject relevant lessons, in one call.

::

    import afteraction as aa
    from afteraction.integrations.maf import attach

    mem = aa.Memory.open()
    attach(agent, mem, identity=scope_for, verify=[aa.verify.tool_succeeded("run_refund_check")])

What is wired, all through MAF's public hooks:

- an agent middleware opens one recorder per ``agent.run`` and finishes it when the run ends
  (for a streamed run, when the stream is consumed): the verifiers and ``checks`` decide
  what is stored;
- a function middleware records every tool call with its arguments and its result or
  exception; the exception propagates untouched, so MAF handles it as it would without us.
  calling a tool again after it failed starts a new attempt (the recorder's rule);
- a context provider adds the reference block for the run's task as one user message:
  at most one per request, none when no lesson qualifies. It asks through the run's recorder
  (``run.reference_block()``), so when the run ends with a verdict the lessons in the block get
  it as a reuse outcome (``Memory.run``'s ``feedback``).

The scope of a run comes from ``identity``, the host's function, never from model output.
Nothing raises into the agent: failures go to ``on_error`` (by default the memory's own) and
the agent runs without memory.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from afteraction.core.tasktext import task_text
from afteraction.core.verify import Verifier
from afteraction.errors import ConfigError, ValidationError
from afteraction.identity import Identity
from afteraction.memory import AsyncMemory, Memory
from afteraction.model import Scope
from afteraction.recorder import ErrorHandler, RunRecorder
from afteraction.reporting import deliver

try:
    from agent_framework import (
        AgentContext,
        AgentMiddleware,
        AgentResponse,
        AgentSession,
        Content,
        ContextProvider,
        FunctionInvocationContext,
        FunctionMiddleware,
        Message,
        MiddlewareTermination,
        ResponseStream,
        SessionContext,
        SupportsAgentRun,
    )
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ConfigError(
        "afteraction.integrations.maf needs the Microsoft Agent Framework: pip install 'afteraction[maf]'"
    ) from exc

__all__ = ["BLOCK_TAG", "AfterActionMemory", "Checks", "RunIdentity", "attach"]

RunIdentity = Identity | Callable[[AgentContext], Scope]
"""The host's function for the scope of a run: ``afteraction.Identity`` (no argument, e.g.
``fixed_identity(scope)``), or a function of MAF's ``AgentContext`` (agent, session, kwargs)."""
Checks = Callable[[AgentResponse[Any]], Mapping[str, bool | None]]
"""The host's checks of a finished run's response: ``{check id: passed}``; None means *do not store*."""

BLOCK_TAG = "afteraction.reference_block"
"""Key in ``Message.additional_properties`` that marks the reference-block message."""

_KEPT_REQUESTS = 3  # user requests remembered per session, so a follow-up ("and retry") keeps its task
_log = logging.getLogger("afteraction.maf")


@dataclass(eq=False)
class _Run:
    """What afteraction holds for one agent run."""

    scope: Scope | None = None
    task: str = ""
    recorder: RunRecorder | None = None
    injected: bool = False
    ended: bool = False


class AfterActionMemory:
    """afteraction for MAF agents: pass ``middleware`` and ``context_provider`` to an ``Agent``,
    or call ``attach(agent)``.

    ``verify`` runs when each run ends; ``checks`` adds the host's checks of the response;
    ``current()`` hands host code (a tool, a check) the recorder of the run in progress.
    """

    def __init__(
        self,
        memory: Memory | AsyncMemory,
        *,
        identity: RunIdentity,
        verify: Sequence[Verifier] = (),
        checks: Checks | None = None,
        allow_args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        on_error: ErrorHandler | None = None,
        source_id: str = "afteraction",
    ) -> None:
        sync = memory.sync if isinstance(memory, AsyncMemory) else memory
        if not isinstance(sync, Memory):
            raise ConfigError(f"memory: expected an afteraction Memory, got {type(memory).__name__}")
        if checks is not None and not callable(checks):
            raise ConfigError("checks: must be a function (AgentResponse) -> {check id: passed}")
        self.memory = sync
        self._aio = sync.aio
        self._identity = _scope_function(identity)
        self.verify = tuple(verify)
        self.checks = checks
        self.allow_args = None if allow_args is None else tuple(allow_args)
        self.env = dict(env) if env is not None else None
        self.on_error = on_error
        self.source_id = source_id
        self._current: ContextVar[_Run | None] = ContextVar(f"afteraction.maf.{source_id}", default=None)
        self.context_provider: ContextProvider = _BlockProvider(self)
        self.run_middleware: AgentMiddleware = _RunMiddleware(self)
        self.tool_middleware: FunctionMiddleware = _ToolMiddleware(self)

    @property
    def middleware(self) -> list[AgentMiddleware | FunctionMiddleware]:
        """The agent-run and function middleware, for ``Agent(middleware=...)``."""
        return [self.run_middleware, self.tool_middleware]

    def attach(self, agent: SupportsAgentRun) -> None:
        """Wire capture and injection into an existing agent; attaching again changes nothing."""
        providers = getattr(agent, "context_providers", None)
        if not isinstance(providers, list) or not hasattr(agent, "middleware"):
            raise ConfigError(f"agent: expected a MAF Agent, got {type(agent).__name__}")
        middleware = list(getattr(agent, "middleware", None) or [])
        if self.run_middleware not in middleware:
            middleware.insert(0, self.run_middleware)  # outermost: sees the run as its caller does
        if self.tool_middleware not in middleware:
            middleware.append(self.tool_middleware)  # innermost: sees what the tool itself did
        agent.middleware = middleware  # MAF documents assigning it after construction
        if self.context_provider not in providers:
            providers.append(self.context_provider)

    def current(self) -> RunRecorder | None:
        """The recorder of the agent run in progress here, or None outside a run."""
        run = self._current.get()
        return None if run is None else run.recorder

    # -- internals: each catches everything, reports it, and lets the agent run on ------------

    def _report(self, exc: BaseException, where: str) -> None:
        try:
            if self.on_error is not None:
                deliver(self.on_error, exc, where)  # an ``async def`` handler is awaited too
            else:
                self.memory.report(exc, where)
        except Exception:
            _log.exception("afteraction: on_error failed while reporting a failure in %s", where)

    def _start(self, context: AgentContext) -> _Run:
        run = _Run()
        try:
            scope = self._identity(context)
            if not isinstance(scope, Scope):
                raise ConfigError(f"identity: returned {type(scope).__name__}, expected a Scope")
            run.task = task_text(self._requests(context.session, context.messages))
            if run.task:
                run.recorder = self.memory.run(
                    run.task,
                    scope=scope,
                    env=self.env,
                    verify=self.verify,
                    allow_args=self.allow_args,
                    on_error=self.on_error,
                )
                run.scope = scope
        except Exception as exc:
            self._report(exc, "maf.start")
        return run

    def _requests(self, session: AgentSession | None, messages: Sequence[Message]) -> list[tuple[str, str]]:
        """The ``(role, text)`` messages of this run, after the last user requests of its session."""
        current = [(str(m.role), m.text) for m in messages if m.text and not m.additional_properties.get(BLOCK_TAG)]
        if session is None:
            return current
        state: dict[str, Any] = session.state.setdefault(self.source_id, {})
        earlier = [text for text in state.get("requests", []) if isinstance(text, str)]
        state["requests"] = (earlier + [text for role, text in current if role == "user"])[-_KEPT_REQUESTS:]
        return [("user", text) for text in earlier] + current

    def _tool(self, run: _Run, context: FunctionInvocationContext, error: Exception | None) -> None:
        if run.recorder is None:
            return
        try:
            name = context.function.name
            call_id = context.metadata.get("call_id")
            run.recorder.tool(
                name,
                args=_arguments(context.arguments),
                result=None if error is not None else _result(context.result),
                error=error,
                call_id=call_id if isinstance(call_id, str) else None,
            )
        except Exception as exc:
            self._report(exc, "maf.tool")

    def _conclude(self, run: _Run, response: object = None, error: BaseException | None = None) -> RunRecorder | None:
        """Records how the run ended; the recorder to finish, or None when there is nothing to store."""
        if run.ended or run.recorder is None:
            return None
        run.ended = True
        recorder = run.recorder
        try:
            if error is not None and not isinstance(error, Exception):
                recorder.abandon()  # cancelled or interrupted: nothing to learn
                return None
            if error is not None:
                recorder.fail(error)
            elif self.checks is not None and isinstance(response, AgentResponse):
                found = self.checks(response)
                if found is None:  # the host declines to judge this run: store nothing
                    recorder.abandon()
                    return None
                if not isinstance(found, Mapping):
                    raise ValidationError("checks", f"must return a mapping of check id to passed, got {found!r:.60}")
                for check_id, passed in found.items():
                    recorder.check(check_id, passed)
        except Exception as exc:
            self._report(exc, "maf.checks")
            recorder.abandon()  # unverifiable: store nothing
            return None
        return recorder

    async def _end(self, run: _Run, response: object = None, error: BaseException | None = None) -> None:
        recorder = self._conclude(run, response, error)
        if recorder is not None:
            await self._aio.finish(recorder)  # the store's I/O stays off the event loop

    @contextmanager
    def _pulling(self, run: _Run) -> Iterator[None]:
        """Makes ``run`` current while a streamed run is pulled (its tools run then)."""
        token = self._current.set(run)
        try:
            yield
        except StopAsyncIteration:
            raise
        except BaseException as exc:
            recorder = self._conclude(run, error=exc)
            if recorder is not None:  # finished off the event loop (a remote memory's call could take seconds)
                threading.Thread(target=recorder.finish, name="afteraction-finish").start()
            raise
        finally:
            self._current.reset(token)

    async def _inject(self, context: SessionContext) -> None:
        run = self._current.get()
        if run is None:
            self._report(ConfigError("the context provider needs the agent middleware too: use attach()"), "maf")
            return
        if run.recorder is None or run.injected or _has_block(context):
            return
        try:  # through the run, so its lessons get its verdict when it ends; it reports its own failures
            block = await self._aio.block_for(run.recorder)
        except Exception as exc:  # the worker thread itself could not run (the loop is shutting down)
            self._report(exc, "maf.inject")
            return
        if block:
            message = Message(role="user", contents=[block], additional_properties={BLOCK_TAG: True})
            context.extend_messages(self.context_provider, [message])
            run.injected = True


class _RunMiddleware(AgentMiddleware):
    """One recorder per agent run: opened before the run, finished when it ends."""

    def __init__(self, owner: AfterActionMemory) -> None:
        self.owner = owner

    async def process(self, context: AgentContext, call_next: Callable[[], Awaitable[None]]) -> None:
        owner = self.owner
        run = owner._start(context)
        token = owner._current.set(run)
        try:
            await call_next()
        except MiddlewareTermination:
            await owner._end(run, response=context.result)
            raise
        except BaseException as exc:
            await owner._end(run, error=exc)
            raise
        finally:
            owner._current.reset(token)
        if isinstance(context.result, ResponseStream):
            stream: ResponseStream[Any, Any] = context.result
            stream.with_pull_context_manager(lambda: owner._pulling(run))
            stream.with_result_hook(lambda response: owner._end(run, response=response))
        else:
            await owner._end(run, response=context.result)


class _ToolMiddleware(FunctionMiddleware):
    """Records each tool call of the current run; the tool's own exception propagates untouched."""

    def __init__(self, owner: AfterActionMemory) -> None:
        self.owner = owner

    async def process(self, context: FunctionInvocationContext, call_next: Callable[[], Awaitable[None]]) -> None:
        run = self.owner._current.get()
        if run is None:
            await call_next()
            return
        try:
            await call_next()
        except Exception as exc:
            self.owner._tool(run, context, exc)
            raise
        self.owner._tool(run, context, None)


class _BlockProvider(ContextProvider):
    """Adds the reference block for the run's task as one message (none when it is empty)."""

    def __init__(self, owner: AfterActionMemory) -> None:
        super().__init__(owner.source_id)
        self.owner = owner

    async def before_run(
        self, *, agent: SupportsAgentRun, session: AgentSession, context: SessionContext, state: dict[str, Any]
    ) -> None:
        await self.owner._inject(context)


def attach(
    agent: SupportsAgentRun,
    memory: Memory | AsyncMemory,
    *,
    identity: RunIdentity,
    verify: Sequence[Verifier] = (),
    checks: Checks | None = None,
    allow_args: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    on_error: ErrorHandler | None = None,
) -> AfterActionMemory:
    """Wire capture and injection into ``agent`` in one call; returns the wiring."""
    wiring = AfterActionMemory(
        memory, identity=identity, verify=verify, checks=checks, allow_args=allow_args, env=env, on_error=on_error
    )
    wiring.attach(agent)
    return wiring


def _scope_function(identity: RunIdentity) -> Callable[[AgentContext], Scope]:
    """One calling convention for both kinds of identity, decided once, at set-up."""
    if isinstance(identity, Scope) or not callable(identity):
        raise ConfigError("identity: give the host's function, e.g. afteraction.fixed_identity(scope)")
    try:
        params = inspect.signature(identity).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: assume the MAF context
        return identity  # type: ignore[return-value]
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in params if p.kind in positional and p.default is inspect.Parameter.empty]
    if not required:
        no_argument: Identity = identity  # type: ignore[assignment]
        return lambda _context: no_argument()
    if len(required) == 1:
        return identity  # type: ignore[return-value]
    raise ConfigError("identity: must take no argument, or one (MAF's AgentContext)")


def _has_block(context: SessionContext) -> bool:
    messages = [m for ms in context.context_messages.values() for m in ms] + list(context.input_messages)
    return any(m.additional_properties.get(BLOCK_TAG) for m in messages)


def _arguments(arguments: object) -> dict[str, Any]:
    if isinstance(arguments, Mapping):
        return dict(arguments)
    dump = getattr(arguments, "model_dump", None)
    return dict(dump()) if callable(dump) else {}


def _result(result: object) -> Any:
    """A tool's result as text: MAF hands middleware a list of ``Content``."""
    if result is None or isinstance(result, (str, int, float, bool)):
        return result
    if isinstance(result, Sequence) and all(isinstance(item, Content) for item in result):
        texts = [item.text for item in result if item.type == "text" and item.text]
        return "\n".join(texts) if texts else None
    return str(result)
