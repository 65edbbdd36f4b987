"""The adapter for a channel name, built from `ChannelSettings`."""

from __future__ import annotations

import httpx

from ..errors import NotConfigured, ValidationError
from .base import ChannelAdapter
from .delivery import RetryPolicy
from .settings import ChannelSettings
from .telegram import TelegramAdapter
from .web import WebAdapter
from .whatsapp import WhatsAppAdapter

__all__ = ["CHANNELS", "adapter_for"]

CHANNELS = ("web", "api", "telegram", "whatsapp")


def adapter_for(
    channel: str,
    settings: ChannelSettings | None = None,
    *,
    client: httpx.AsyncClient | None = None,
    policy: RetryPolicy | None = None,
) -> ChannelAdapter:
    """`NotConfigured` when the platform's credentials are missing; `ValidationError` for an unknown name."""
    settings = settings or ChannelSettings()
    if channel in ("web", "api"):
        return WebAdapter(channel, message_limit=settings.web_message_limit)
    if channel == "telegram":
        if not settings.telegram_bot_token:
            raise NotConfigured("the telegram channel needs LEARNLOOP_TELEGRAM_BOT_TOKEN", channel=channel)
        return TelegramAdapter(
            settings.telegram_bot_token,
            base_url=settings.telegram_api_base,
            client=client,
            message_limit=settings.telegram_message_limit,
            policy=policy,
        )
    if channel == "whatsapp":
        if not settings.whatsapp_token or not settings.whatsapp_phone_number_id:
            raise NotConfigured(
                "the whatsapp channel needs LEARNLOOP_WHATSAPP_TOKEN and LEARNLOOP_WHATSAPP_PHONE_NUMBER_ID",
                channel=channel,
            )
        return WhatsAppAdapter(
            settings.whatsapp_token,
            settings.whatsapp_phone_number_id,
            base_url=settings.whatsapp_api_base,
            api_version=settings.whatsapp_api_version,
            client=client,
            message_limit=settings.whatsapp_message_limit,
            policy=policy,
        )
    raise ValidationError(f"unknown channel {channel!r}; known: {', '.join(CHANNELS)}", field="channel")
