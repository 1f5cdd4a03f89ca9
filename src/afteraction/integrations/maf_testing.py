"""A scripted chat client for the Microsoft Agent Framework: test agents offline, no key, no network.

Each reply in the script answers one model request, in order: a string is the model's final
text, ``tool_call(...)`` asks for one tool call, a list of them asks for several at once.
The client is built from MAF's own layers, so the agent's real function-invocation loop and
middleware run exactly as they would with a hosted model::

    client = ScriptedChatClient([
        tool_call("run_refund_check", strategy="retry"),
        tool_call("run_refund_check", strategy="wait-for-lock"),
        "Refund issued.",
    ])
    agent = Agent(client=client, tools=[run_refund_check])
    await agent.run("Refund ticket 42 is stuck in pending")
    client.requests[-1]        # the messages of the last model request, as the model saw them
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import Any

from afteraction.errors import ConfigError

try:
    from agent_framework import (
        BaseChatClient,
        ChatMiddlewareLayer,
        ChatResponse,
        ChatResponseUpdate,
        Content,
        FunctionInvocationLayer,
        Message,
        ResponseStream,
    )
    from agent_framework.observability import ChatTelemetryLayer
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ConfigError(
        "afteraction.integrations.maf_testing needs the Microsoft Agent Framework: pip install 'afteraction[maf]'"
    ) from exc

__all__ = ["Reply", "ScriptExhaustedError", "ScriptedChatClient", "tool_call"]

Reply = str | Content | Sequence[Content]
"""One model reply: final text, one tool call, or several tool calls."""


class ScriptExhaustedError(AssertionError):
    """The agent asked the model more often than the script has replies."""


def tool_call(name: str, /, **arguments: Any) -> Content:
    """A reply in which the model asks to call tool ``name`` with ``arguments``."""
    return Content.from_function_call(call_id="", name=name, arguments=dict(arguments))


class ScriptedChatClient(
    FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], ChatTelemetryLayer[Any], BaseChatClient[Any]
):
    """A chat client that answers from a script, through MAF's real function-invocation loop.

    ``requests`` holds a copy of the messages of every model request, in order.
    """

    OTEL_PROVIDER_NAME = "afteraction.scripted"

    def __init__(self, replies: Sequence[Reply], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.replies: list[Reply] = list(replies)
        self.requests: list[list[Message]] = []

    def _next_contents(self, messages: Sequence[Message]) -> list[Content]:
        self.requests.append(list(messages))
        if not self.replies:
            raise ScriptExhaustedError(f"the script has no reply left for model request {len(self.requests)}")
        reply = self.replies.pop(0)
        if isinstance(reply, str):
            return [Content.from_text(reply)]
        items = [reply] if isinstance(reply, Content) else list(reply)
        n = len(self.requests)
        return [
            Content.from_function_call(
                call_id=f"call-{n}-{i}", name=item.name or "", arguments=_arguments(item.arguments)
            )
            if item.type == "function_call"
            else item
            for i, item in enumerate(items)
        ]

    def _inner_get_response(
        self,
        *,
        messages: Sequence[Message],
        stream: bool,
        options: Mapping[str, Any],
        **kwargs: Any,
    ) -> Awaitable[ChatResponse[Any]] | ResponseStream[ChatResponseUpdate, ChatResponse[Any]]:
        if stream:

            async def updates() -> AsyncIterator[ChatResponseUpdate]:
                yield ChatResponseUpdate(role="assistant", contents=self._next_contents(messages))

            return self._build_response_stream(updates())

        async def respond() -> ChatResponse[Any]:
            return ChatResponse(messages=[Message(role="assistant", contents=self._next_contents(messages))])

        return respond()


def _arguments(value: object) -> Mapping[str, Any] | str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return dict(value)
    return str(value)
