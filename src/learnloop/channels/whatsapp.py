"""WhatsApp through the Cloud API: webhook notifications in, `POST /{version}/{phone_number_id}/messages` out.

Inbound: a `whatsapp_business_account` notification whose `entry[].changes[].value.messages[]` holds
messages; only `type: "text"` ones are answered (status receipts, media, reactions carry nothing). The
sender is the message's `from` (a phone number, the WhatsApp id), named by the matching `contacts[]` profile;
the reply goes to that number from the `phone_number_id` the adapter is configured with (the inbound
`metadata.phone_number_id` is kept on the sender for apps with several numbers).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import httpx

from ..errors import ChannelSendError, ConfigurationError
from .base import ChannelUser, InboundMessage, SentMessage
from .delivery import Delivery, PlatformAdapter, RetryPolicy
from .markups import WhatsAppMarkup

__all__ = ["WHATSAPP_API", "WHATSAPP_API_VERSION", "WHATSAPP_LIMIT", "WhatsAppAdapter"]

WHATSAPP_API = "https://graph.facebook.com"
WHATSAPP_API_VERSION = "v23.0"
# The Cloud API's cap on `text.body` (the WhatsApp app itself allows 65,536).
WHATSAPP_LIMIT = 4096
_OUTSIDE_WINDOW = "131047"  # the Cloud API's error code for a message outside the customer service window


class WhatsAppAdapter(PlatformAdapter):
    def __init__(
        self,
        access_token: str,
        phone_number_id: str,
        *,
        base_url: str = WHATSAPP_API,
        api_version: str = WHATSAPP_API_VERSION,
        client: httpx.AsyncClient | None = None,
        message_limit: int = WHATSAPP_LIMIT,
        policy: RetryPolicy | None = None,
    ) -> None:
        if not access_token or not phone_number_id:
            raise ConfigurationError(
                "WhatsApp needs an access token and a phone number id "
                "(LEARNLOOP_WHATSAPP_TOKEN, LEARNLOOP_WHATSAPP_PHONE_NUMBER_ID)"
            )
        if message_limit <= 0:
            raise ConfigurationError("WhatsApp messages have a limit: message_limit must be positive")
        self._url = f"{base_url.rstrip('/')}/{api_version}/{phone_number_id}/messages"
        self._limit = message_limit
        self._markup = WhatsAppMarkup()
        self._delivery = Delivery(
            "whatsapp",
            client=client,
            headers={"Authorization": f"Bearer {access_token}"},
            secrets=(access_token,),
            policy=policy,
        )

    @property
    def channel(self) -> str:
        return "whatsapp"

    def resolve_user(self, event: Mapping[str, Any]) -> ChannelUser | None:
        return next((sender for _, sender in _messages(event)), None)

    def parse(self, event: Mapping[str, Any]) -> list[InboundMessage]:
        found: list[InboundMessage] = []
        for message, sender in _messages(event):
            text = message.get("text")
            body = text.get("body") if isinstance(text, Mapping) else None
            if message.get("type") != "text" or not isinstance(body, str) or not body.strip():
                continue
            stamp = str(message.get("timestamp"))
            found.append(
                InboundMessage(
                    channel="whatsapp",
                    sender=sender,
                    message_id=str(message.get("id") or ""),
                    text=body,
                    recipient=sender.channel_user_id,
                    timestamp=datetime.fromtimestamp(int(stamp), UTC) if stamp.isdigit() else None,
                )
            )
        return found

    def payload(self, to: str, body: str) -> dict[str, Any]:
        """The Cloud API request body for one text part."""
        return {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": to,
            "type": "text",
            "text": {"body": body, "preview_url": False},
        }

    async def _send_parts(self, to: str, parts: list[str]) -> list[SentMessage]:
        sent: list[SentMessage] = []
        for part in parts:  # in order: each part waits for the one before it
            try:
                body, attempts = await self._delivery.post(self._url, self.payload(to, part))
            except ChannelSendError as error:
                if _OUTSIDE_WINDOW in (error.description or ""):
                    raise ChannelSendError(
                        f"{error.message}. WhatsApp allows free-form text only within 24 hours of the person's "
                        "last message; after that only an approved template message can start a conversation",
                        channel=error.channel,
                        status=error.status,
                        attempts=error.attempts,
                        description=error.description,
                    ) from error
                raise
            messages = body.get("messages")
            first = messages[0] if isinstance(messages, list) and messages else None
            message_id = first.get("id") if isinstance(first, Mapping) else None
            sent.append(SentMessage("whatsapp", to, part, str(message_id) if message_id else None, attempts))
        return sent


def _messages(event: Any) -> Iterator[tuple[Mapping[str, Any], ChannelUser]]:
    """Every message of a notification with its sender, whatever its type."""
    for value in _values(event):
        found = value.get("metadata")
        metadata: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        names = {
            str(c.get("wa_id")): c.get("profile", {}).get("name")
            for c in value.get("contacts") or []
            if isinstance(c, Mapping) and isinstance(c.get("profile", {}), Mapping)
        }
        for message in value.get("messages") or []:
            if not isinstance(message, Mapping) or not message.get("from"):
                continue
            number = str(message["from"])
            name = names.get(number)
            yield (
                message,
                ChannelUser(
                    channel="whatsapp",
                    channel_user_id=number,
                    display_name=name if isinstance(name, str) and name else None,
                    metadata={"phone_number_id": str(metadata.get("phone_number_id") or "")},
                ),
            )


def _values(event: Any) -> Iterator[Mapping[str, Any]]:
    if not isinstance(event, Mapping):
        return
    for entry in event.get("entry") or []:
        for change in (entry.get("changes") or []) if isinstance(entry, Mapping) else []:
            value = change.get("value") if isinstance(change, Mapping) else None
            if isinstance(value, Mapping):
                yield value
