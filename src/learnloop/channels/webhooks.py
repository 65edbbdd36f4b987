"""Checks that an inbound webhook really comes from the platform, before anything in it is believed.

Without them anyone could post an update naming any `channel_user_id` and read that person's memory in the
answer. Each check raises `WebhookRejected` (an `AuthenticationError`: HTTP 401) on a missing or wrong
credential, and also when no secret is configured: an unconfigured secret never means "accept all".
Comparisons are constant-time (`hmac.compare_digest`).

From a Starlette/FastAPI route (verify first, on the raw body, then read):

    body = await request.body()
    verify_webhook("whatsapp", request.headers, body, settings)   # or verify_telegram / verify_whatsapp_signature
    messages = adapter_for("whatsapp", settings).parse(read_event(body))
    challenge = whatsapp_handshake(request.query_params, settings.whatsapp_verify_token)   # the GET handshake
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

from ..errors import ValidationError, WebhookRejected
from .settings import ChannelSettings

__all__ = [
    "MAX_EVENT_BYTES",
    "TELEGRAM_SECRET_HEADER",
    "WHATSAPP_SIGNATURE_HEADER",
    "read_event",
    "verify_telegram",
    "verify_webhook",
    "verify_whatsapp_signature",
    "whatsapp_handshake",
]

TELEGRAM_SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
MAX_EVENT_BYTES = 1_000_000  # a text update is a few kilobytes; a megabyte is no message
WHATSAPP_SIGNATURE_HEADER = "X-Hub-Signature-256"


def verify_telegram(headers: Mapping[str, str], secret: str | None) -> None:
    """The `secret_token` given to `setWebhook` comes back in every update's secret-token header."""
    if not secret:
        raise WebhookRejected("telegram webhook refused: no webhook secret is configured", channel="telegram")
    sent = _header(headers, TELEGRAM_SECRET_HEADER)
    if sent is None:
        raise WebhookRejected(f"telegram webhook refused: no {TELEGRAM_SECRET_HEADER} header", channel="telegram")
    if not hmac.compare_digest(sent.encode(), secret.encode()):
        raise WebhookRejected("telegram webhook refused: wrong secret token", channel="telegram")


def verify_whatsapp_signature(body: bytes, headers: Mapping[str, str], app_secret: str | None) -> None:
    """`X-Hub-Signature-256: sha256=<hex>` is the HMAC-SHA256 of the raw request body with the app secret.

    Pass the body exactly as received: a re-serialised JSON object does not have the same bytes."""
    if not app_secret:
        raise WebhookRejected("whatsapp webhook refused: no app secret is configured", channel="whatsapp")
    sent = _header(headers, WHATSAPP_SIGNATURE_HEADER)
    if sent is None:
        raise WebhookRejected(f"whatsapp webhook refused: no {WHATSAPP_SIGNATURE_HEADER} header", channel="whatsapp")
    scheme, _, digest = sent.strip().partition("=")
    expected = hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()
    if scheme.lower() != "sha256" or not hmac.compare_digest(digest.strip().lower().encode(), expected.encode()):
        raise WebhookRejected("whatsapp webhook refused: the signature does not match the body", channel="whatsapp")


def whatsapp_handshake(params: Mapping[str, str], verify_token: str | None) -> str:
    """The subscription check (`GET` with `hub.mode=subscribe`, `hub.verify_token`, `hub.challenge`): the
    challenge to echo back as the plain-text answer, when the verify token is ours."""
    if not verify_token:
        raise WebhookRejected("whatsapp subscription refused: no verify token is configured", channel="whatsapp")
    mode, token, challenge = params.get("hub.mode"), params.get("hub.verify_token"), params.get("hub.challenge")
    if mode != "subscribe" or token is None or challenge is None:
        raise WebhookRejected("whatsapp subscription refused: not a subscribe request", channel="whatsapp")
    if not hmac.compare_digest(token.encode(), verify_token.encode()):
        raise WebhookRejected("whatsapp subscription refused: wrong verify token", channel="whatsapp")
    return challenge


def verify_webhook(channel: str, headers: Mapping[str, str], body: bytes, settings: ChannelSettings) -> None:
    """The check for `channel`'s inbound POST; channels without a webhook (web, api) authenticate by API key."""
    if channel == "telegram":
        verify_telegram(headers, settings.telegram_webhook_secret)
    elif channel == "whatsapp":
        verify_whatsapp_signature(body, headers, settings.whatsapp_app_secret)
    else:
        raise WebhookRejected(f"no webhook for channel {channel!r}", channel=channel)


def read_event(body: bytes) -> dict[str, Any]:
    """A verified webhook body as a JSON object, or `ValidationError` (HTTP 422), never a 500."""
    if len(body) > MAX_EVENT_BYTES:
        raise ValidationError(f"a webhook body must be at most {MAX_EVENT_BYTES} bytes")
    try:
        event = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationError("a webhook body must be JSON") from exc
    if not isinstance(event, dict):
        raise ValidationError("a webhook body must be a JSON object")
    return event


def _header(headers: Mapping[str, str], name: str) -> str | None:
    """Starlette's headers ignore case already; a plain dict may not."""
    value = headers.get(name)
    if value is None:
        lowered = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lowered), None)
    return value
