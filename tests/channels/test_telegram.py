"""The Telegram adapter against a loopback stand-in for the Bot API: payloads, parts in order, retries, errors."""

from __future__ import annotations

import httpx
import pytest

from learnloop.channels import ChannelAdapter, ChannelSendError, TelegramAdapter
from learnloop.errors import ConfigurationError, ValidationError

from .conftest import FAST
from .platforms import Answer, FakePlatform

TOKEN = "123456:secret-bot-token"
UPDATE = {
    "update_id": 10,
    "message": {
        "message_id": 7,
        "from": {
            "id": 42,
            "is_bot": False,
            "first_name": "Ada",
            "last_name": "L",
            "username": "ada",
            "language_code": "en",
        },
        "chat": {"id": 42, "type": "private"},
        "date": 1_700_000_000,
        "text": "How long should I mash?",
    },
}


def adapter(platform: FakePlatform, **kwargs: object) -> TelegramAdapter:
    return TelegramAdapter(TOKEN, base_url=platform.url, policy=FAST, **kwargs)  # type: ignore[arg-type]


def test_it_is_a_channel_adapter() -> None:
    assert isinstance(TelegramAdapter(TOKEN), ChannelAdapter)


def test_resolve_user_and_parse_read_the_sender_and_the_text() -> None:
    telegram = TelegramAdapter(TOKEN)
    user = telegram.resolve_user(UPDATE)
    assert user is not None
    assert (user.channel, user.channel_user_id, user.username, user.display_name) == ("telegram", "42", "ada", "Ada L")
    assert "42" not in str(user.metadata)  # the chat id is the person's id in a private chat: never stored
    [message] = telegram.parse(UPDATE)
    assert (message.text, message.recipient, message.message_id) == ("How long should I mash?", "42", "42:7")
    assert message.timestamp is not None and message.timestamp.year == 2023


def test_updates_without_text_carry_nothing_to_answer() -> None:
    telegram = TelegramAdapter(TOKEN)
    photo = {"update_id": 1, "message": {**UPDATE["message"], "text": None, "photo": [{"file_id": "x"}]}}
    assert telegram.parse(photo) == []
    assert telegram.parse({"update_id": 2, "edited_message": UPDATE["message"]}) == []
    assert telegram.parse({"update_id": 3, "callback_query": {}}) == []
    assert telegram.resolve_user({"update_id": 3}) is None
    bot = {"message": {**UPDATE["message"], "from": {"id": 1, "is_bot": True}}}
    assert telegram.resolve_user(bot) is None and telegram.parse(bot) == []


async def test_send_posts_well_formed_send_message_requests_in_order(platform: FakePlatform) -> None:
    async with httpx.AsyncClient() as client:
        telegram = adapter(platform, client=client, message_limit=60)
        answer = "**First** paragraph, long enough to need a part of its own.\n\nSecond one & <more>."
        sent = await telegram.send("42", answer)
    assert len(sent) == 2
    assert [s.message_id for s in sent] == ["1", "2"]
    for request, receipt in zip(platform.requests, sent, strict=True):
        assert request.path == f"/bot{TOKEN}/sendMessage"
        assert request.body == {
            "chat_id": "42",
            "text": receipt.text,
            "parse_mode": "HTML",
            "link_preview_options": {"is_disabled": True},
        }
    assert platform.requests[0].body["text"].startswith("<b>First</b>")
    assert platform.requests[1].body["text"] == "Second one &amp; &lt;more&gt;."


async def test_a_429_is_retried_after_telegrams_retry_after(platform: FakePlatform) -> None:
    too_many = {
        "ok": False,
        "error_code": 429,
        "description": "Too Many Requests: retry after 1",
        "parameters": {"retry_after": 1},
    }
    platform.then(Answer(429, too_many))
    [receipt] = await adapter(platform).send("42", "hello")
    assert receipt.attempts == 2
    assert len(platform.requests) == 2


async def test_a_5xx_is_retried_then_delivered(platform: FakePlatform) -> None:
    platform.then(Answer(500, {"ok": False, "error_code": 500, "description": "Internal Server Error"}))
    [receipt] = await adapter(platform).send("42", "hello")
    assert receipt.attempts == 2


async def test_persistent_5xx_gives_a_clear_error_without_the_token(platform: FakePlatform) -> None:
    platform.always = Answer(502, {"ok": False, "error_code": 502, "description": f"Bad Gateway for bot{TOKEN}"})
    with pytest.raises(ChannelSendError) as caught:
        await adapter(platform).send("42", "hello")
    error = caught.value
    assert (error.status, error.attempts, error.channel) == (502, FAST.max_attempts, "telegram")
    assert len(platform.requests) == FAST.max_attempts
    assert "Bad Gateway" in error.message and TOKEN not in error.message and TOKEN not in str(error.to_dict())


async def test_a_400_is_not_retried(platform: FakePlatform) -> None:
    platform.then(Answer(400, {"ok": False, "error_code": 400, "description": "Bad Request: chat not found"}))
    with pytest.raises(ChannelSendError) as caught:
        await adapter(platform).send("nobody", "hello")
    assert caught.value.attempts == 1 and caught.value.status == 400
    assert caught.value.description == "Bad Request: chat not found"
    assert len(platform.requests) == 1


async def test_no_server_at_all_is_a_send_error_after_the_retries() -> None:
    with FakePlatform() as gone:
        url = gone.url
    telegram = TelegramAdapter(TOKEN, base_url=url, policy=FAST)
    with pytest.raises(ChannelSendError) as caught:
        await telegram.send("42", "hello")
    assert caught.value.status is None and caught.value.attempts == FAST.max_attempts
    await telegram.aclose()


async def test_send_error_sends_words_not_a_stack_trace(platform: FakePlatform) -> None:
    try:
        raise ValidationError("text must be a string, got int at /srv/app/handler.py:12")
    except ValidationError as error:
        [receipt] = await adapter(platform).send_error("42", error)
    assert "handler.py" not in receipt.text and "Sorry" in receipt.text
    [other] = await adapter(platform).send_error("42", RuntimeError("Traceback (most recent call last): ..."))
    assert "Traceback" not in other.text


def test_link_previews_can_be_turned_back_on() -> None:
    assert "link_preview_options" not in TelegramAdapter(TOKEN, disable_link_preview=False).payload("1", "x")


def test_a_token_is_required_and_a_limit_too() -> None:
    with pytest.raises(ConfigurationError):
        TelegramAdapter("")
    with pytest.raises(ConfigurationError):
        TelegramAdapter(TOKEN, message_limit=0)


def test_an_adapter_works_from_one_event_loop_after_another(platform: FakePlatform) -> None:
    import asyncio

    telegram = adapter(platform)  # the client it creates belongs to the loop that first sends
    assert asyncio.run(telegram.send("42", "one"))[0].message_id == "1"
    assert asyncio.run(telegram.send("42", "two"))[0].message_id == "2"
