"""Channels over HTTP: Telegram and WhatsApp webhooks believed only when signed, answered through the responder
and the platform's API (a loopback stand-in), the web chat's messages, and /link across them."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from learnloop.channels import ChannelSettings, InboundMessage
from learnloop.embedders.base import Embedder
from learnloop.server import ServiceOptions
from learnloop.turns import Turn
from tests.channels.platforms import FakePlatform

from .conftest import RunningServer, error_of, running_server

SECRET = "tg-webhook-secret"
APP_SECRET = "wa-app-secret"
VERIFY = "wa-verify-token"
PHONE_ID = "106540352242922"
FACT = "I prefer vegetarian recipes; I never eat meat."
QUESTION = "Can you suggest some recipes for dinner?"


async def remembering(turn: Turn, message: InboundMessage) -> str:
    known = [item.learning.text for item in turn.retrieval.items] if turn.retrieval else []
    return "**Noted.** I remember: " + ("; ".join(known) if known else "nothing yet")


@pytest.fixture(scope="module")
def platform() -> Iterator[FakePlatform]:
    with FakePlatform() as fake:
        yield fake


@pytest.fixture(scope="module")
def service(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder, platform: FakePlatform
) -> Iterator[RunningServer]:
    channels = ChannelSettings(
        telegram_bot_token="1:bot-token",
        telegram_webhook_secret=SECRET,
        telegram_api_base=platform.url,
        whatsapp_token="wa-token",
        whatsapp_app_secret=APP_SECRET,
        whatsapp_verify_token=VERIFY,
        whatsapp_phone_number_id=PHONE_ID,
        whatsapp_api_base=platform.url,
    )
    options = ServiceOptions(poll_interval=0.2, heartbeat=1.0, channels=channels, responder=remembering)
    with running_server(tmp_path_factory.mktemp("channels") / "channels.db", embedder, options) as running:
        yield running


def update(text: str, user_id: int, update_id: int) -> dict[str, Any]:
    sender = {"id": user_id, "is_bot": False, "first_name": "Ana", "username": "ana"}
    message = {"message_id": update_id, "from": sender, "chat": {"id": user_id, "type": "private"}, "text": text}
    return {"update_id": update_id, "message": message | {"date": 1_700_000_000}}


def notification(text: str, phone: str, message_id: str) -> dict[str, Any]:
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": PHONE_ID},
        "contacts": [{"profile": {"name": "Ana"}, "wa_id": phone}],
        "messages": [
            {"from": phone, "id": message_id, "timestamp": "1700000000", "type": "text", "text": {"body": text}}
        ],
    }
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": "WABA", "changes": [{"field": "messages", "value": value}]}],
    }


def signed(body: bytes, secret: str = APP_SECRET) -> dict[str, str]:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature-256": f"sha256={digest}", "Content-Type": "application/json"}


def stored_rows(db: Path, table: str) -> int:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_unsigned_or_wrongly_signed_webhooks_get_401_and_store_nothing(service: RunningServer) -> None:
    tg = json.dumps(update("My card is 4111 1111 1111 1111", 9001, 1)).encode()
    wa = json.dumps(notification("I live at 5 Elm Street", "16505550000", "wamid.1")).encode()
    before = {t: stored_rows(Path(service.db), t) for t in ("channel_identities", "conversations", "learnings")}
    with service.client() as c:
        attempts = [
            c.post("/api/channels/telegram/webhook", content=tg),
            c.post("/api/channels/telegram/webhook", content=tg, headers={"X-Telegram-Bot-Api-Secret-Token": "guess"}),
            c.post("/api/channels/whatsapp/webhook", content=wa),
            c.post("/api/channels/whatsapp/webhook", content=wa, headers=signed(wa, "another-secret")),
            c.post(
                "/api/channels/whatsapp/webhook", content=wa + b" ", headers=signed(wa)
            ),  # body changed after signing
        ]
    assert [r.status_code for r in attempts] == [401] * 5
    assert {error_of(r)["code"] for r in attempts} == {"webhook_rejected"}
    assert before == {t: stored_rows(Path(service.db), t) for t in before}


def test_the_whatsapp_subscription_handshake(service: RunningServer) -> None:
    with service.client() as c:
        ok = c.get(
            "/api/channels/whatsapp/webhook",
            params={"hub.mode": "subscribe", "hub.verify_token": VERIFY, "hub.challenge": "1158201444"},
        )
        wrong = c.get(
            "/api/channels/whatsapp/webhook",
            params={"hub.mode": "subscribe", "hub.verify_token": "x", "hub.challenge": "1"},
        )
    assert (ok.status_code, ok.text) == (200, "1158201444")
    assert wrong.status_code == 401


def test_a_signed_telegram_update_is_answered_once_and_a_retry_gets_the_same_answer(
    service: RunningServer, platform: FakePlatform
) -> None:
    body = json.dumps(update(FACT, 4242, 10)).encode()
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET, "Content-Type": "application/json"}
    with service.client() as c:
        first = c.post("/api/channels/telegram/webhook", content=body, headers=headers)
        again = c.post("/api/channels/telegram/webhook", content=body, headers=headers)  # the platform retried
    assert first.status_code == 200 and again.status_code == 200, first.text
    [handled] = first.json()["handled"]
    [repeat] = again.json()["handled"]
    assert handled["kind"] == "turn" and repeat["kind"] == "redelivered" and repeat["turn"] == handled["turn"]
    sent = [r for r in platform.requests if r.path.endswith("/sendMessage") and r.body["chat_id"] == "4242"]
    assert [r.body["parse_mode"] for r in sent] == ["HTML", "HTML"]
    assert sent[0].body["text"] == sent[1].body["text"] == "<b>Noted.</b> I remember: nothing yet"
    assert sent[0].path == "/bot1:bot-token/sendMessage"


def test_a_learning_made_on_the_web_is_recalled_on_whatsapp_after_linking(
    service: RunningServer, platform: FakePlatform
) -> None:
    app = service.key("default", "app")
    phone = "447700900123"

    def whatsapp(text: str, message_id: str) -> dict[str, Any]:
        body = json.dumps(notification(text, phone, message_id)).encode()
        with service.client() as c:
            response = c.post("/api/channels/whatsapp/webhook", content=body, headers=signed(body))
        assert response.status_code == 200, response.text
        return dict(response.json())

    with service.client(app) as c:
        told = c.post("/api/channels/web/messages", json={"channel_user_id": "sess-9f2", "text": FACT})
        assert told.status_code == 200, told.text
        assert told.json()["parts"][0].startswith("<p><strong>Noted.</strong>")
        service.call(service.loop.turns.drain())

        before = whatsapp(QUESTION, "wamid.A")["handled"][0]
        assert before["user"] != told.json()["user"] and "vegetarian" not in before["parts"][0]

        issued = c.post("/api/channels/web/messages", json={"channel_user_id": "sess-9f2", "text": "/link"}).json()
        code = issued["parts"][0].split("<strong>")[1].split("</strong>")[0]
        linked = whatsapp(f"/link {code}", "wamid.B")["handled"][0]
        assert linked["kind"] == "link" and linked["user"] == told.json()["user"]  # joined the web visitor

    after = whatsapp(QUESTION + " Something quick, please.", "wamid.C")["handled"][0]
    assert after["user"] == told.json()["user"]
    assert "vegetarian" in after["parts"][0]
    delivered = [
        r for r in platform.requests if r.path == f"/v21.0/{PHONE_ID}/messages" or r.path.endswith("/messages")
    ]
    assert delivered and all(r.body["to"] == phone and r.body["type"] == "text" for r in delivered)
    assert all(r.headers["authorization"] == "Bearer wa-token" for r in delivered)


def test_web_messages_need_a_tenant_key(service: RunningServer) -> None:
    with service.client() as c:
        assert c.post("/api/channels/web/messages", json={"channel_user_id": "s", "text": "hi"}).status_code == 401
    user_key = service.key("default", "user", user="someone")
    with service.client(user_key) as c:
        assert c.post("/api/channels/web/messages", json={"channel_user_id": "s", "text": "hi"}).status_code == 403


def test_without_a_responder_a_verified_webhook_is_a_409(tmp_path: Path, embedder: Embedder) -> None:
    options = ServiceOptions(channels=ChannelSettings(telegram_bot_token="1:t", telegram_webhook_secret=SECRET))
    with running_server(tmp_path / "none.db", embedder, options) as running, running.client() as c:
        body = json.dumps(update("hello", 1, 1)).encode()
        response = c.post(
            "/api/channels/telegram/webhook", content=body, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}
        )
    assert response.status_code == 409 and error_of(response)["code"] == "not_configured"
