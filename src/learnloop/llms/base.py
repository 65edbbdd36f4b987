"""The chat-model contract: OpenAI-style messages and tool calls, whatever the provider."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

__all__ = ["ChatModel", "ChatResponse", "Message", "ToolCall", "ToolSpec"]


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str = "{}"


class Message(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None


class ToolSpec(BaseModel):
    """A function the model may call: name, description and JSON-schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


class ChatResponse(BaseModel):
    message: Message
    finish_reason: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    model: str | None = None


@runtime_checkable
class ChatModel(Protocol):
    @property
    def model_id(self) -> str: ...

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        json_output: bool = False,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        """One completion. `json_output` asks the provider for a JSON object (response_format)."""
        ...

    async def aclose(self) -> None: ...
