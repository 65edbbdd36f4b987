"""Webhook checks: the right secret or signature passes; a wrong, missing or unconfigured one is refused."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse

from learnloop.channels import (
    ChannelSettings,
    WebhookRejected,
    adapter_for,
    read_event,
    verify_telegram,
    verify_webhook,
    verify_whatsapp_signature,
    whatsapp_handshake,
)
from learnloop.errors import AuthenticationError
from learnloop.server.errors import install_error_handlers

from .conftest import FAST
from .platforms import FakePlatform

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
    settings = ChannelSettings(telegram_webhook_secret=SECRET, whatsapp_app_secret=APP_SECRET)
    verify_webhook("telegram", {"X-Telegram-Bot-Api-Secret-Token": SECRET}, b"{}", settings)
    verify_webhook("whatsapp", {"X-Hub-Signature-256": sign(BODY)}, BODY, settings)
    for channel, headers in (("telegram", {}), ("whatsapp", {"X-Hub-Signature-256": sign(b"other")}), ("web", {})):
        with pytest.raises(WebhookRejected):
            verify_webhook(channel, headers, BODY, settings)


def test_read_event_gives_a_json_object_or_a_validation_error() -> None:
    from learnloop.errors import ValidationError

    assert read_event(BODY)["object"] == "whatsapp_business_account"
    for body in (b"not json", b"[1, 2]", b"\xff\xfe", b" " * 1_000_001):
        with pytest.raises(ValidationError):
            read_event(body)


# -- the checks in a real route: how the service wires them (401, 422, the reply sent) ------------------------------


@contextlib.contextmanager
def webhook_service(settings: ChannelSettings) -> Iterator[str]:
    """A FastAPI app with learnloop's error handlers and one webhook route per channel, on uvicorn on loopback."""
    app = FastAPI()
    install_error_handlers(app)
    adapters = {channel: adapter_for(channel, settings, policy=FAST) for channel in ("telegram", "whatsapp")}

    @app.post("/webhooks/{channel}")
    async def receive(channel: str, request: Request) -> dict[str, int]:
        body = await request.body()
        verify_webhook(channel, request.headers, body, settings)  # unknown channels are refused here too
        adapter = adapters[channel]
        messages = adapter.parse(read_event(body))
        for message in messages:  # the real route feeds turn() here and sends its answer
            await adapter.send(message.recipient, f"You said: **{message.text}**")
        return {"messages": len(messages)}

    @app.get("/webhooks/whatsapp", response_class=PlainTextResponse)
    async def subscribe(request: Request) -> str:
        return whatsapp_handshake(request.query_params, settings.whatsapp_verify_token)

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=asyncio.run, args=(server.serve(sockets=[sock]),), daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "the webhook service did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.mark.server
def test_webhook_routes_refuse_the_unsigned_and_answer_the_signed(platform: FakePlatform) -> None:
    from .test_telegram import UPDATE
    from .test_whatsapp import NOTIFICATION

    settings = ChannelSettings(
        telegram_bot_token="123:abc",
        telegram_webhook_secret=SECRET,
        telegram_api_base=platform.url,
        whatsapp_token="wa-token",
        whatsapp_phone_number_id="1065",
        whatsapp_app_secret=APP_SECRET,
        whatsapp_verify_token="verify-me",
        whatsapp_api_base=platform.url,
    )
    whatsapp_body = json.dumps(NOTIFICATION).encode()
    with webhook_service(settings) as url, httpx.Client(base_url=url) as http:
        refused = [
            http.post("/webhooks/telegram", json=UPDATE),
            http.post("/webhooks/telegram", json=UPDATE, headers={"X-Telegram-Bot-Api-Secret-Token": "guess"}),
            http.post("/webhooks/whatsapp", content=whatsapp_body),
            http.post("/webhooks/whatsapp", content=whatsapp_body, headers={"X-Hub-Signature-256": sign(b"{}")}),
            http.get(
                "/webhooks/whatsapp", params={"hub.mode": "subscribe", "hub.verify_token": "x", "hub.challenge": "1"}
            ),
        ]
        assert [r.status_code for r in refused] == [401] * 5
        assert all(r.json()["error"]["code"] == "webhook_rejected" for r in refused)
        assert platform.requests == []  # nothing was read, nothing answered

        telegram = http.post("/webhooks/telegram", json=UPDATE, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET})
        whatsapp = http.post(
            "/webhooks/whatsapp", content=whatsapp_body, headers={"X-Hub-Signature-256": sign(whatsapp_body)}
        )
        assert (telegram.status_code, telegram.json()) == (200, {"messages": 1})
        assert (whatsapp.status_code, whatsapp.json()) == (200, {"messages": 1})
        bad_json = http.post("/webhooks/whatsapp", content=b"{oops", headers={"X-Hub-Signature-256": sign(b"{oops")})
        assert bad_json.status_code == 422
        challenge = http.get(
            "/webhooks/whatsapp",
            params={"hub.mode": "subscribe", "hub.verify_token": "verify-me", "hub.challenge": "77"},
        )
        assert (challenge.status_code, challenge.text) == (200, "77")
    sent = [r.body for r in platform.requests]
    assert sent[0]["text"] == "You said: <b>How long should I mash?</b>" and sent[0]["chat_id"] == "42"
    assert sent[1]["text"]["body"] == "You said: *What yeast did I like?*" and sent[1]["to"] == "16505551234"
