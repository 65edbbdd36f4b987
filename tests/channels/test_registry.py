"""Adapters from settings, and settings from the environment."""

from __future__ import annotations

import pytest

from learnloop.channels import ChannelSettings, TelegramAdapter, WebAdapter, WhatsAppAdapter, adapter_for
from learnloop.errors import NotConfigured, ValidationError

ENV = {
    "LEARNLOOP_TELEGRAM_BOT_TOKEN": "123:abc",
    "LEARNLOOP_TELEGRAM_WEBHOOK_SECRET": "tg-secret",
    "LEARNLOOP_WHATSAPP_TOKEN": "wa-token",
    "LEARNLOOP_WHATSAPP_APP_SECRET": "wa-app-secret",
    "LEARNLOOP_WHATSAPP_VERIFY_TOKEN": "wa-verify",
    "LEARNLOOP_WHATSAPP_PHONE_NUMBER_ID": "1065",
    "LEARNLOOP_WHATSAPP_MESSAGE_LIMIT": "1000",
}


def test_adapter_for_each_channel() -> None:
    settings = ChannelSettings.from_env(ENV)
    assert isinstance(adapter_for("telegram", settings), TelegramAdapter)
    whatsapp = adapter_for("whatsapp", settings)
    assert isinstance(whatsapp, WhatsAppAdapter) and whatsapp.message_limit == 1000
    assert isinstance(adapter_for("web"), WebAdapter) and adapter_for("api").channel == "api"


def test_a_channel_without_credentials_is_not_configured_and_an_unknown_one_is_invalid() -> None:
    with pytest.raises(NotConfigured):
        adapter_for("telegram", ChannelSettings())
    with pytest.raises(NotConfigured):
        adapter_for("whatsapp", ChannelSettings(whatsapp_token="t"))
    with pytest.raises(ValidationError):
        adapter_for("sms", ChannelSettings())
