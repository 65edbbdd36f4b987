"""The channel router (seed 001 §7): the person resolved across channels, one turn per message, the answer sent
in the channel's markup; /link commands; the duplicate window answers with the first response; errors in words."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

import learnloop
from learnloop.channels import ChannelRouter, InboundMessage, TelegramAdapter, WebAdapter
from learnloop.channels.base import ChannelUser
from learnloop.errors import ResponderError
from learnloop.turns import Turn
from tests.support.clock import Clock

from .conftest import FAST
from .platforms import FakePlatform

FACT = "I prefer vegetarian recipes; I never eat meat."
QUESTION = "Can you suggest some recipes for dinner?"


class Remembering:
    """A responder that answers with what memory gave the turn, and counts its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def __call__(self, turn: Turn, message: InboundMessage) -> str:
        self.calls.append(message.text)
        known = [item.learning.text for item in turn.retrieval.items] if turn.retrieval else []
        return "**Noted.** I remember: " + ("; ".join(known) if known else "nothing yet")


def telegram_update(text: str, *, user_id: int = 777, update_id: int = 1) -> dict[str, Any]:
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "from": {"id": user_id, "is_bot": False, "first_name": "Ana", "username": "ana"},
            "chat": {"id": user_id, "type": "private"},
            "date": 1_700_000_000,
            "text": text,
        },
    }


def web_message(text: str, token: str = "sess-abc") -> InboundMessage:
    return InboundMessage("web", ChannelUser("web", token), message_id="", text=text, recipient=token)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def loop(open_loop: Callable[..., learnloop.Loop], clock: Clock) -> AsyncIterator[learnloop.Loop]:
    lp = open_loop("router.db", clock=clock)
    yield lp
    await lp.aclose()


@pytest.fixture
async def telegram(platform: FakePlatform) -> AsyncIterator[TelegramAdapter]:
    adapter = TelegramAdapter("1:tok", base_url=platform.url, policy=FAST)
    yield adapter
    await adapter.aclose()


def sent_texts(platform: FakePlatform) -> list[str]:
    return [r.body["text"] for r in platform.requests]


async def test_learning_follows_the_person_after_linking_and_not_before(
    loop: learnloop.Loop, clock: Clock, telegram: TelegramAdapter, platform: FakePlatform
) -> None:
    respond = Remembering()
    router = ChannelRouter(loop, respond)
    web = WebAdapter("web")

    told = await router.handle_message(web, web_message(FACT))
    assert told.kind == "turn" and told.sent[0].text.startswith("<p><strong>Noted.</strong>")
    await loop.turns.drain()
    assert any("vegetarian" in x.text for x in (await loop.list(user=told.user)).items)

    clock.advance(seconds=40)
    [before] = await router.handle(telegram, telegram_update(QUESTION, update_id=1))
    assert before.kind == "turn" and before.user != told.user
    assert "vegetarian" not in sent_texts(platform)[-1]  # another person, as far as anyone knows yet

    clock.advance(seconds=40)
    [issued] = await router.handle(telegram, telegram_update("/link", update_id=2))
    assert issued.kind == "link" and issued.turn is None
    code = sent_texts(platform)[-1].split("<b>")[1].split("</b>")[0]
    linked = await router.handle_message(web, web_message(f"/link {code}"))
    assert linked.kind == "link" and "Linked" in linked.sent[0].text
    await loop.identities.finish_merges()

    clock.advance(seconds=40)
    [after] = await router.handle(telegram, telegram_update(QUESTION, update_id=3))
    assert after.kind == "turn" and after.user == before.user
    assert "vegetarian" in sent_texts(platform)[-1]
    assert len(respond.calls) == 3  # link commands never reach the responder


async def test_a_repeat_within_the_window_is_answered_with_the_first_response(
    loop: learnloop.Loop, clock: Clock, telegram: TelegramAdapter, platform: FakePlatform
) -> None:
    respond = Remembering()
    router = ChannelRouter(loop, respond)
    [first] = await router.handle(telegram, telegram_update(FACT, update_id=1))
    clock.advance(seconds=5)
    [again] = await router.handle(telegram, telegram_update(FACT, update_id=2))  # the platform retried
    assert again.kind == "duplicate" and again.duplicate_of == first.turn
    assert respond.calls == [FACT]
    assert sent_texts(platform)[0] == sent_texts(platform)[1]
    await loop.turns.drain()
    assert len([x for x in (await loop.list(user=first.user)).items if "vegetarian" in x.text]) == 1


async def test_a_wrong_code_links_nothing(
    loop: learnloop.Loop, telegram: TelegramAdapter, platform: FakePlatform
) -> None:
    router = ChannelRouter(loop, Remembering())
    [tg] = await router.handle(telegram, telegram_update("/link"))
    wrong = await router.handle_message(WebAdapter(), web_message("/link WRONGCODE"))
    assert wrong.kind == "link" and "wrong, used or expired" in wrong.sent[0].text
    assert (await loop.identities.resolve("web", "sess-abc")).user != tg.user


async def test_a_failing_responder_is_told_in_words_and_learns_nothing(
    loop: learnloop.Loop, telegram: TelegramAdapter, platform: FakePlatform
) -> None:
    async def broken(turn: Turn, message: InboundMessage) -> str:
        raise KeyError("internal detail")

    [handled] = await ChannelRouter(loop, broken).handle(telegram, telegram_update(FACT))
    assert handled.kind == "error" and handled.error == ResponderError.code
    assert sent_texts(platform) == ["Sorry, something went wrong on my side. Please try again in a moment."]
    await loop.turns.drain()
    assert (await loop.list(user=handled.user)).items == []


async def test_events_without_text_do_nothing(loop: learnloop.Loop, telegram: TelegramAdapter) -> None:
    assert await ChannelRouter(loop, Remembering()).handle(telegram, {"update_id": 5, "edited_message": {}}) == []


async def test_a_repeat_whose_first_answer_was_stored_redacted_is_answered_anew(
    loop: learnloop.Loop, clock: Clock, telegram: TelegramAdapter, platform: FakePlatform
) -> None:
    calls: list[str] = []

    async def contact(turn: Turn, message: InboundMessage) -> str:
        calls.append(message.text)
        return "Write to refunds.desk@example.com."

    router = ChannelRouter(loop, contact)
    await router.handle(telegram, telegram_update("Who handles refunds?", update_id=1))
    clock.advance(seconds=3)
    [again] = await router.handle(telegram, telegram_update("Who handles refunds?", update_id=2))
    assert again.kind == "duplicate" and len(calls) == 2
    assert sent_texts(platform) == ["Write to refunds.desk@example.com."] * 2


@pytest.mark.parametrize("text", ["/link@LearnloopBot", "/LINK", "  /link  "])
async def test_link_commands_in_telegram_s_forms(
    loop: learnloop.Loop, telegram: TelegramAdapter, platform: FakePlatform, text: str
) -> None:
    [issued] = await ChannelRouter(loop, Remembering()).handle(telegram, telegram_update(text))
    assert issued.kind == "link" and "Your link code is" in sent_texts(platform)[-1]


async def test_a_code_sent_on_the_next_line_or_to_the_bot_links(
    loop: learnloop.Loop, telegram: TelegramAdapter, platform: FakePlatform
) -> None:
    router = ChannelRouter(loop, Remembering())
    [tg] = await router.handle(telegram, telegram_update("/link"))
    code = sent_texts(platform)[-1].split("<b>")[1].split("</b>")[0]
    linked = await router.handle_message(WebAdapter(), web_message(f"/link@LearnloopBot\n{code}"))
    assert linked.kind == "link" and linked.user == tg.user


async def test_unlinking_an_only_channel_says_so(
    loop: learnloop.Loop, telegram: TelegramAdapter, platform: FakePlatform
) -> None:
    [handled] = await ChannelRouter(loop, Remembering()).handle(telegram, telegram_update("/unlink"))
    assert handled.kind == "link" and "nothing to unlink" in sent_texts(platform)[-1]


async def test_an_event_delivered_again_late_is_the_same_turn(
    loop: learnloop.Loop, clock: Clock, telegram: TelegramAdapter, platform: FakePlatform
) -> None:
    respond = Remembering()
    router = ChannelRouter(loop, respond)
    [first] = await router.handle(telegram, telegram_update(FACT, update_id=7))
    clock.advance(seconds=90)  # past the duplicate window: the platform's retries gave up late
    [again] = await router.handle(telegram, telegram_update(FACT, update_id=7))
    assert again.kind == "redelivered" and again.turn == first.turn and respond.calls == [FACT]
    assert sent_texts(platform)[0] == sent_texts(platform)[1]
    await loop.turns.drain()
    assert len([x for x in (await loop.list(user=first.user)).items if "vegetarian" in x.text]) == 1
