"""Channel settings from the environment."""

from __future__ import annotations

import pytest

from learnloop.channels import ChannelSettings
from learnloop.errors import ConfigurationError

from .test_registry import ENV


def test_settings_are_read_from_the_environment_and_keep_secrets_out_of_repr() -> None:
    settings = ChannelSettings.from_env(ENV)
    assert settings.telegram_bot_token == "123:abc" and settings.whatsapp_message_limit == 1000
    assert settings.whatsapp_phone_number_id == "1065" and settings.telegram_message_limit == 4096
    shown = repr(settings)
    assert not any(secret in shown for secret in ("123:abc", "tg-secret", "wa-token", "wa-app-secret", "wa-verify"))
    with pytest.raises(ConfigurationError):
        ChannelSettings.from_env({"LEARNLOOP_TELEGRAM_MESSAGE_LIMIT": "lots"})
