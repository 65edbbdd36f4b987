"""Channel-specific preferences (seed 001 §8.8): what a person says about the channel they write on is scoped to it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import learnloop
from learnloop.capture.channel_scope import channel_tag, said_for_channel, served_on


@pytest.mark.parametrize(
    ("message", "channel"),
    [
        ("On WhatsApp, please keep your answers short.", "whatsapp"),
        ("Over Telegram I'd rather get bullet points", "telegram"),
        ("In this chat plain text works best for me", "web"),
        ("En este chat prefiero respuestas cortas", "whatsapp"),
        ("Bitte hier im Chat keine Tabellen", "telegram"),
        ("In the web chat, show me the tables", "web"),
        ("On slack keep it brief", "slack"),
    ],
)
def test_a_message_about_its_own_channel_is_scoped(message: str, channel: str) -> None:
    assert said_for_channel(message, channel)


@pytest.mark.parametrize(
    ("message", "channel"),
    [
        ("I live here in Lyon and brew on weekends", "whatsapp"),
        ("I prefer detailed answers with sources", "telegram"),
        ("Our web shop runs on the Shopify API", "web"),
        ("Use the orders API for revenue figures", "api"),
        ("My brother uses Telegram a lot", "whatsapp"),  # another channel named is not this one
        ("", "telegram"),
        ("On WhatsApp keep it short", ""),
    ],
)
def test_other_messages_follow_the_person(message: str, channel: str) -> None:
    assert not said_for_channel(message, channel)


def test_a_scoped_learning_is_served_on_its_channel_only() -> None:
    scoped = ["brewing", channel_tag("whatsapp")]
    assert served_on(scoped, "whatsapp") and not served_on(scoped, "telegram")
    assert served_on(scoped, None)  # no channel given: every learning of the person
    assert served_on(["brewing"], "telegram") and served_on([], "web")


async def test_a_preference_said_for_one_channel_is_served_there_and_the_rest_everywhere(
    open_loop: Callable[..., learnloop.Loop],
) -> None:
    loop = open_loop("scope.db")
    try:
        said = {
            "whatsapp": "On WhatsApp I prefer short answers without tables.",
            "telegram": "I prefer answers with sources and detail.",
        }
        for channel, message in said.items():
            async with loop.turn("ana", message, session=channel, channel=channel) as turn:
                await turn.finish("Noted.")
        await loop.turns.drain()
        learned = {x.text: x.tags for x in (await loop.list(user="ana")).items}
        assert learned == {
            "User prefers short answers without tables": [channel_tag("whatsapp")],
            "User prefers answers with sources and detail": [],
        }
        question = "How do I prefer my answers?"
        served = {}
        for channel in ("whatsapp", "telegram", "web"):
            async with loop.turn("ana", question, session=f"{channel}-2", channel=channel) as turn:
                served[channel] = {i.learning.text for i in turn.retrieval.items} if turn.retrieval else set()
                await turn.finish("ok")
        assert "User prefers short answers without tables" in served["whatsapp"]
        assert all("User prefers short answers without tables" not in served[c] for c in ("telegram", "web"))
        assert all("User prefers answers with sources and detail" in served[c] for c in served)
        everywhere = await loop.retrieve_context("ana", question, record=False)  # no channel: all of them
        assert {i.learning.text for i in everywhere.items} >= set(learned)
    finally:
        await loop.aclose()
