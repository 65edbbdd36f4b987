"""The WhatsApp adapter against a loopback stand-in for the Cloud API: payloads, auth, parts, retries, errors."""

from __future__ import annotations

import httpx
import pytest

from learnloop.channels import ChannelAdapter, ChannelSendError, WhatsAppAdapter
from learnloop.errors import ConfigurationError

from .conftest import FAST
from .platforms import Answer, FakePlatform

TOKEN = "EAAG-access-token"
PHONE_ID = "106540352242922"
NOTIFICATION = {
    "object": "whatsapp_business_account",
    "entry": [
        {
            "id": "WABA",
            "changes": [
                {
                    "field": "messages",
                    "value": {
                        "messaging_product": "whatsapp",
                        "metadata": {"display_phone_number": "15550783881", "phone_number_id": PHONE_ID},
                        "contacts": [{"profile": {"name": "Grace"}, "wa_id": "16505551234"}],
                        "messages": [
                            {
                                "from": "16505551234",
                                "id": "wamid.HBgL",
                                "timestamp": "1700000000",
                                "type": "text",
                                "text": {"body": "What yeast did I like?"},
                            },
                            {"from": "16505551234", "id": "wamid.IMG", "timestamp": "1700000001", "type": "image"},
                        ],
                    },
                }
            ],
        }
    ],
}
STATUSES = {
    "object": "whatsapp_business_account",
    "entry": [{"id": "WABA", "changes": [{"field": "messages", "value": {"statuses": [{"id": "wamid.X"}]}}]}],
}


def adapter(platform: FakePlatform, **kwargs: object) -> WhatsAppAdapter:
    return WhatsAppAdapter(TOKEN, PHONE_ID, base_url=platform.url, api_version="v23.0", policy=FAST, **kwargs)  # type: ignore[arg-type]


def test_it_is_a_channel_adapter() -> None:
    assert isinstance(WhatsAppAdapter(TOKEN, PHONE_ID), ChannelAdapter)


def test_parse_keeps_text_messages_and_names_the_sender() -> None:
    whatsapp = WhatsAppAdapter(TOKEN, PHONE_ID)
    [message] = whatsapp.parse(NOTIFICATION)
    assert (message.text, message.recipient, message.message_id) == (
        "What yeast did I like?",
        "16505551234",
        "wamid.HBgL",
    )
    user = whatsapp.resolve_user(NOTIFICATION)
    assert user is not None and user == message.sender
    assert (user.channel_user_id, user.display_name, user.metadata["phone_number_id"]) == (
        "16505551234",
        "Grace",
        PHONE_ID,
    )


def test_status_receipts_and_junk_carry_nothing() -> None:
    whatsapp = WhatsAppAdapter(TOKEN, PHONE_ID)
    for event in (STATUSES, {}, {"entry": "x"}, {"entry": [{"changes": [{"value": {"messages": "no"}}]}]}):
        assert whatsapp.parse(event) == []
        assert whatsapp.resolve_user(event) is None


async def test_send_posts_cloud_api_text_messages_with_the_bearer_token(platform: FakePlatform) -> None:
    async with httpx.AsyncClient() as client:
        whatsapp = adapter(platform, client=client, message_limit=40)
        sent = await whatsapp.send("16505551234", "**Bold** start of a long answer.\n\nAnd a second paragraph.")
    assert [s.message_id for s in sent] == ["wamid.1", "wamid.2"]
    for request, receipt in zip(platform.requests, sent, strict=True):
        assert request.path == f"/v23.0/{PHONE_ID}/messages"
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        assert request.headers["content-type"] == "application/json"
        assert request.body == {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": "16505551234",
            "type": "text",
            "text": {"body": receipt.text, "preview_url": False},
        }
    assert platform.requests[0].body["text"]["body"] == "*Bold* start of a long answer."


async def test_a_429_with_retry_after_then_200(platform: FakePlatform) -> None:
    platform.then(Answer(429, {"error": {"message": "rate limit", "code": 130429}}, {"Retry-After": "0"}))
    [receipt] = await adapter(platform).send("16505551234", "hi")
    assert receipt.attempts == 2


async def test_a_503_then_200(platform: FakePlatform) -> None:
    platform.then(Answer(503, {"error": {"message": "Service temporarily unavailable"}}))
    [receipt] = await adapter(platform).send("16505551234", "hi")
    assert receipt.attempts == 2


async def test_persistent_500_is_a_clear_error_after_max_attempts(platform: FakePlatform) -> None:
    platform.always = Answer(500, {"error": {"message": f"Unexpected error, token {TOKEN}", "code": 2}})
    with pytest.raises(ChannelSendError) as caught:
        await adapter(platform).send("16505551234", "hi")
    assert (caught.value.status, caught.value.attempts) == (500, FAST.max_attempts)
    assert "Unexpected error" in caught.value.message and TOKEN not in caught.value.message


async def test_a_400_is_not_retried_and_says_why(platform: FakePlatform) -> None:
    platform.then(Answer(400, {"error": {"message": "(#131030) Recipient phone number not in allowed list"}}))
    with pytest.raises(ChannelSendError) as caught:
        await adapter(platform).send("1", "hi")
    assert caught.value.attempts == 1 and "not in allowed list" in (caught.value.description or "")
    assert len(platform.requests) == 1


async def test_a_failed_part_stops_the_rest(platform: FakePlatform) -> None:
    platform.then(Answer(), Answer(400, {"error": {"message": "bad"}}))
    with pytest.raises(ChannelSendError):
        await adapter(platform, message_limit=30).send("1", "First part is here.\n\nSecond.\n\nThird part here.")
    assert len(platform.requests) == 2


def test_credentials_are_required() -> None:
    with pytest.raises(ConfigurationError):
        WhatsAppAdapter("", PHONE_ID)
    with pytest.raises(ConfigurationError):
        WhatsAppAdapter(TOKEN, "")


async def test_the_wait_honours_the_platforms_retry_after_up_to_the_cap(
    platform: FakePlatform, caplog: pytest.LogCaptureFixture
) -> None:
    platform.then(
        Answer(429, {"error": {"message": "slow down"}}, {"Retry-After": "0.004"}),
        Answer(429, {"error": {"message": "slow down"}}, {"Retry-After": "3600"}),
    )
    with caplog.at_level("WARNING", logger="learnloop.channels.delivery"):
        [receipt] = await adapter(platform).send("1", "hi")
    assert receipt.attempts == 3
    waits = [record.args[-1] for record in caplog.records]  # type: ignore[index]
    assert waits == [0.004, FAST.max_retry_after]  # asked for, then the cap instead of an hour


async def test_outside_the_24_hour_window_the_error_says_so(platform: FakePlatform) -> None:
    reengage = {"error": {"message": "Re-engagement message", "type": "OAuthException", "code": 131047}}
    platform.then(Answer(400, reengage))
    with pytest.raises(ChannelSendError) as caught:
        await adapter(platform).send("16505551234", "hello again")
    assert "24 hours" in caught.value.message and "template" in caught.value.message
    assert caught.value.description == "Re-engagement message (code 131047)" and caught.value.attempts == 1
