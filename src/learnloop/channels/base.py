"""What every channel adapter offers, and the plain records it exchanges with the rest of learnloop.

A channel (Telegram, WhatsApp, the web chat or API) turns a platform's inbound event into `InboundMessage`s
and a `ChannelUser` (who sent it, as that platform names them), and turns learnloop's canonical Markdown
answer into that platform's markup, split to its message limit, and delivers it. Identity linking (which
canonical user a `ChannelUser` is) lives elsewhere; adapters only name the sender.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

__all__ = ["ChannelAdapter", "ChannelUser", "InboundMessage", "SentMessage", "friendly_error"]


@dataclass(frozen=True)
class ChannelUser:
    """A sender as one platform names them. `metadata` holds what a reply needs (chat_id, phone_number_id …)."""

    channel: str
    channel_user_id: str
    username: str | None = None
    display_name: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class InboundMessage:
    """One text message from an inbound event. `recipient` is where the reply goes (a chat id, a phone number)."""

    channel: str
    sender: ChannelUser
    message_id: str
    text: str
    recipient: str
    timestamp: datetime | None = None


@dataclass(frozen=True)
class SentMessage:
    """The receipt of one delivered part: the platform's message id when it returned one, and what was sent."""

    channel: str
    recipient: str
    text: str
    message_id: str | None = None
    attempts: int = 1


@runtime_checkable
class ChannelAdapter(Protocol):
    """One messaging platform. `message_limit` 0 means no limit."""

    @property
    def channel(self) -> str: ...

    @property
    def message_limit(self) -> int: ...

    def resolve_user(self, event: Mapping[str, Any]) -> ChannelUser | None:
        """The sender of an inbound event, or None when the event has no person behind it."""
        ...

    def parse(self, event: Mapping[str, Any]) -> list[InboundMessage]:
        """The text messages an inbound event carries; other events (media, receipts, edits) give none."""
        ...

    def format_response(self, markdown: str) -> list[str]:
        """Canonical Markdown → the platform's markup, split into parts that each fit `message_limit`."""
        ...

    async def send(self, recipient: str, markdown: str) -> list[SentMessage]:
        """Format and deliver an answer, parts in order; raises `ChannelSendError` when the platform refuses."""
        ...

    async def send_error(self, recipient: str, error: BaseException) -> list[SentMessage]:
        """Tell the person something went wrong, in words (never a stack trace)."""
        ...


_FRIENDLY = {
    "validation_error": "Sorry, I couldn't understand that message. Could you rephrase it?",
    "write_refused": "Sorry, I couldn't keep that: it looked like private or unsafe information.",
    "not_configured": "Sorry, this assistant isn't fully set up yet. Please try again later.",
    "llm_error": "Sorry, I couldn't reach my language model just now. Please try again in a moment.",
}
_FALLBACK = "Sorry, something went wrong on my side. Please try again in a moment."


def friendly_error(error: BaseException) -> str:
    """A short sentence for a person: chosen by the error's kind, never its message (which may hold internals)."""
    return _FRIENDLY.get(str(getattr(error, "code", "")), _FALLBACK)
