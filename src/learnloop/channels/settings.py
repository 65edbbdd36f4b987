"""Channel settings: platform tokens and secrets, read once at an entry point like `learnloop.Settings`.

Environment variables are `LEARNLOOP_<FIELD>`, for example `LEARNLOOP_TELEGRAM_BOT_TOKEN`,
`LEARNLOOP_TELEGRAM_WEBHOOK_SECRET`, `LEARNLOOP_WHATSAPP_TOKEN`, `LEARNLOOP_WHATSAPP_APP_SECRET`,
`LEARNLOOP_WHATSAPP_VERIFY_TOKEN`, `LEARNLOOP_WHATSAPP_PHONE_NUMBER_ID`. Secrets stay out of `repr`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..errors import ConfigurationError
from .telegram import TELEGRAM_API, TELEGRAM_LIMIT
from .whatsapp import WHATSAPP_API, WHATSAPP_API_VERSION, WHATSAPP_LIMIT

__all__ = ["ChannelSettings"]

_ENV_PREFIX = "LEARNLOOP_"


@dataclass(frozen=True)
class ChannelSettings:
    telegram_bot_token: str | None = field(default=None, repr=False)
    telegram_webhook_secret: str | None = field(default=None, repr=False)
    telegram_api_base: str = TELEGRAM_API
    telegram_message_limit: int = TELEGRAM_LIMIT
    whatsapp_token: str | None = field(default=None, repr=False)
    whatsapp_app_secret: str | None = field(default=None, repr=False)
    whatsapp_verify_token: str | None = field(default=None, repr=False)
    whatsapp_phone_number_id: str | None = None
    whatsapp_api_base: str = WHATSAPP_API
    whatsapp_api_version: str = WHATSAPP_API_VERSION
    whatsapp_message_limit: int = WHATSAPP_LIMIT
    web_message_limit: int = 0  # 0: the web page takes an answer whole

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> ChannelSettings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(_ENV_PREFIX + f.name.upper())
            if raw is None or raw == "":
                continue
            if f.name.endswith("_limit"):
                try:
                    values[f.name] = int(raw)
                except ValueError as exc:
                    raise ConfigurationError(f"{_ENV_PREFIX}{f.name.upper()} must be a whole number") from exc
            else:
                values[f.name] = raw
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def with_(self, **changes: Any) -> ChannelSettings:
        return replace(self, **changes)
