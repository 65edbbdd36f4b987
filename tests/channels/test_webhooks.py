"""Webhook checks: the right secret or signature passes; a wrong, missing or unconfigured one is refused."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from learnloop.channels import WebhookRejected, verify_telegram, verify_whatsapp_signature, whatsapp_handshake
from learnloop.errors import AuthenticationError

SECRET = "s3cr3t-token_AZ"
APP_SECRET = "app-secret"
BODY = json.dumps({"object": "whatsapp_business_account", "entry": []}).encode()


def sign(body: bytes, secret: str = APP_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def test_telegram_secret_token() -> None:
    verify_telegram({"X-Telegram-Bot-Api-Secret-Token": SECRET}, SECRET)
    verify_telegram({"x-telegram-bot-api-secret-token": SECRET}, SECRET)  # header names ignore case
    for headers in ({}, {"X-Telegram-Bot-Api-Secret-Token": "wrong"}, {"X-Telegram-Bot-Api-Secret-Token": ""}):
        with pytest.raises(WebhookRejected):
            verify_telegram(headers, SECRET)


def test_an_unconfigured_secret_refuses_everything() -> None:
    with pytest.raises(WebhookRejected):
        verify_telegram({"X-Telegram-Bot-Api-Secret-Token": ""}, "")
    with pytest.raises(WebhookRejected):
        verify_whatsapp_signature(BODY, {"X-Hub-Signature-256": sign(BODY, "")}, None)
    with pytest.raises(WebhookRejected):
        whatsapp_handshake({"hub.mode": "subscribe", "hub.verify_token": "", "hub.challenge": "1"}, "")


def test_whatsapp_signature_of_the_raw_body() -> None:
    verify_whatsapp_signature(BODY, {"X-Hub-Signature-256": sign(BODY)}, APP_SECRET)
    verify_whatsapp_signature(
        BODY, {"x-hub-signature-256": sign(BODY).upper().replace("SHA256=", "sha256=")}, APP_SECRET
    )
    reserialised = json.dumps(json.loads(BODY), separators=(",", ":")).encode()
    bad = [
        {},
        {"X-Hub-Signature-256": sign(BODY, "other-secret")},
        {"X-Hub-Signature-256": sign(reserialised)},  # the same JSON with other bytes is not what was signed
        {"X-Hub-Signature-256": sign(BODY).replace("sha256=", "sha1=")},
        {"X-Hub-Signature-256": "garbage"},
    ]
    for headers in bad:
        with pytest.raises(WebhookRejected):
            verify_whatsapp_signature(BODY, headers, APP_SECRET)


def test_whatsapp_subscribe_handshake_echoes_the_challenge() -> None:
    good = {"hub.mode": "subscribe", "hub.verify_token": "verify-me", "hub.challenge": "1158201444"}
    assert whatsapp_handshake(good, "verify-me") == "1158201444"
    for params in ({**good, "hub.verify_token": "nope"}, {**good, "hub.mode": "unsubscribe"}, {"hub.challenge": "1"}):
        with pytest.raises(WebhookRejected):
            whatsapp_handshake(params, "verify-me")


def test_a_rejection_is_an_authentication_error_so_routes_answer_401() -> None:
    assert issubclass(WebhookRejected, AuthenticationError)
    with pytest.raises(WebhookRejected) as caught:
        verify_telegram({}, SECRET)
    assert caught.value.to_dict()["code"] == "webhook_rejected"
    assert SECRET not in caught.value.message


def test_verify_webhook_picks_the_channels_check() -> None:
    from learnloop.channels import ChannelSettings, verify_webhook

    settings = ChannelSettings(telegram_webhook_secret=SECRET, whatsapp_app_secret=APP_SECRET)
    verify_webhook("telegram", {"X-Telegram-Bot-Api-Secret-Token": SECRET}, b"{}", settings)
    verify_webhook("whatsapp", {"X-Hub-Signature-256": sign(BODY)}, BODY, settings)
    for channel, headers in (("telegram", {}), ("whatsapp", {"X-Hub-Signature-256": sign(b"other")}), ("web", {})):
        with pytest.raises(WebhookRejected):
            verify_webhook(channel, headers, BODY, settings)


def test_read_event_gives_a_json_object_or_a_validation_error() -> None:
    from learnloop.channels import read_event
    from learnloop.errors import ValidationError

    assert read_event(BODY)["object"] == "whatsapp_business_account"
    for body in (b"not json", b"[1, 2]", b"\xff\xfe", b" " * 1_000_001):
        with pytest.raises(ValidationError):
            read_event(body)
