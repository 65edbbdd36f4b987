"""Telegram through the Bot API: updates in, `sendMessage` with `parse_mode: HTML` out.

Inbound: an `Update` carrying a `message` with `text` (edits, media, service messages and other update kinds
carry nothing to answer). The sender is `message.from`; the reply goes to `message.chat.id`. Telegram numbers
messages per chat, so a message id here is `<chat_id>:<message_id>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import httpx

from ..errors import ConfigurationError
from .base import ChannelUser, InboundMessage, SentMessage
from .delivery import Delivery, PlatformAdapter, RetryPolicy
from .markups import TelegramHTML

__all__ = ["TELEGRAM_API", "TELEGRAM_LIMIT", "TelegramAdapter"]

TELEGRAM_API = "https://api.telegram.org"
TELEGRAM_LIMIT = 4096  # characters after entity parsing, per sendMessage


class TelegramAdapter(PlatformAdapter):
    def __init__(
        self,
        bot_token: str,
        *,
        base_url: str = TELEGRAM_API,
        client: httpx.AsyncClient | None = None,
        message_limit: int = TELEGRAM_LIMIT,
        disable_link_preview: bool = True,
        policy: RetryPolicy | None = None,
    ) -> None:
        if not bot_token:
            raise ConfigurationError("a Telegram bot token is needed (LEARNLOOP_TELEGRAM_BOT_TOKEN)")
        if message_limit <= 0:
            raise ConfigurationError("Telegram messages have a limit: message_limit must be positive")
        self._url = f"{base_url.rstrip('/')}/bot{bot_token}/sendMessage"
        self._limit = message_limit
        self._disable_link_preview = disable_link_preview
        self._markup = TelegramHTML()
        self._delivery = Delivery("telegram", client=client, secrets=(bot_token,), policy=policy)

    @property
    def channel(self) -> str:
        return "telegram"

    def resolve_user(self, event: Mapping[str, Any]) -> ChannelUser | None:
        message = _message(event)
        return _sender(message) if message is not None else None

    def parse(self, event: Mapping[str, Any]) -> list[InboundMessage]:
        message = _message(event)
        if message is None or not isinstance(message.get("text"), str) or not message["text"].strip():
            return []
        sender = _sender(message)
        chat = message.get("chat")
        if sender is None or not isinstance(chat, Mapping) or chat.get("id") is None:
            return []
        chat_id = str(chat["id"])
        date = message.get("date")
        return [
            InboundMessage(
                channel="telegram",
                sender=sender,
                message_id=f"{chat_id}:{message.get('message_id')}",
                text=message["text"],
                recipient=chat_id,
                timestamp=datetime.fromtimestamp(date, UTC) if isinstance(date, int) else None,
            )
        ]

    def payload(self, chat_id: str, text: str) -> dict[str, Any]:
        """The `sendMessage` request body for one part. Link previews are off by default: Telegram's servers
        would fetch whatever URL a (possibly prompt-injected) answer names, query string and all."""
        body: dict[str, Any] = {"chat_id": chat_id, "text": text, "parse_mode": "HTML"}
        if self._disable_link_preview:
            body["link_preview_options"] = {"is_disabled": True}
        return body

    async def _send_parts(self, chat_id: str, parts: list[str]) -> list[SentMessage]:
        sent: list[SentMessage] = []
        for part in parts:  # in order: each part waits for the one before it
            body, attempts = await self._delivery.post(self._url, self.payload(chat_id, part))
            result = body.get("result")
            message_id = result.get("message_id") if isinstance(result, Mapping) else None
            sent.append(SentMessage("telegram", chat_id, part, _str_or_none(message_id), attempts))
        return sent


def _message(event: Mapping[str, Any]) -> Mapping[str, Any] | None:
    message = event.get("message") if isinstance(event, Mapping) else None
    return message if isinstance(message, Mapping) else None


def _sender(message: Mapping[str, Any]) -> ChannelUser | None:
    person = message.get("from")
    if not isinstance(person, Mapping) or person.get("id") is None or person.get("is_bot") is True:
        return None
    names = [person.get("first_name"), person.get("last_name")]
    display = " ".join(n for n in names if isinstance(n, str) and n) or None
    chat = message.get("chat")
    metadata: dict[str, Any] = {}
    # Not the chat id: in a private chat it is the person's Telegram id, which is stored only as a pseudonym.
    # Replies go to each update's own chat (`InboundMessage.recipient`).
    if isinstance(chat, Mapping) and isinstance(chat.get("type"), str):
        metadata = {"chat_type": chat["type"]}
    if isinstance(person.get("language_code"), str):
        metadata["language_code"] = person["language_code"]
    username = person.get("username")
    return ChannelUser(
        channel="telegram",
        channel_user_id=str(person["id"]),
        username=username if isinstance(username, str) else None,
        display_name=display,
        metadata=metadata,
    )


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
