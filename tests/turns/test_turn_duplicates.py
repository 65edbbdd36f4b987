"""Seed 001 §8.6, whole: the same message from the same person within 30 s — on any channel, in any session — is
learned from once and answered with the first turn's response; a tool call recorded twice counts once."""

from __future__ import annotations

import asyncio
import logging

import pytest

import learnloop
from tests.support.clock import Clock

TOP = {"resource": "products", "sort_key": "BEST_SELLING", "limit": 10}
PREFERENCE = "I prefer metric units in every answer, and top products by revenue."


async def _learned(loop: learnloop.Loop) -> list[str]:
    return [x.text for x in (await loop.list(user="alice")).items]


async def test_a_repeat_on_another_channel_learns_once_and_gets_the_first_answer(
    turns_loop: learnloop.Loop, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    loop = turns_loop
    caplog.set_level(logging.INFO, logger="learnloop.turns")
    async with loop.turn("alice", PREFERENCE, session="tg-42", channel="telegram") as first:
        await first.tool_call("shop_analytics", TOP, result={"rows": 10}, ms=80)
        await first.finish("Noted: metric units. Here are the top products.")
    clock.advance(seconds=10)
    # The same words, cased and spaced otherwise, from the web a few seconds later.
    async with loop.turn("alice", f"  {PREFERENCE.upper()}\n", session="web-7", channel="web") as again:
        assert again.duplicate_of == first.id and again.channel == "web"
        assert again.cached_response == "Noted: metric units. Here are the top products."
        await again.tool_call("shop_analytics", TOP, result={"rows": 10}, ms=75)  # the app ran the tool again
        finished = await again.finish("A second answer nobody will see.")
    assert finished.response == "Noted: metric units. Here are the top products." and finished.status == "done"
    await loop.turns.drain()

    learned = await _learned(loop)
    assert len([t for t in learned if "metric" in t]) == 1
    record = await loop.turns.get(again.id)
    assert record.channel == "web" and record.duplicate_of == first.id and record.steps == {}
    assert len(record.tool_calls) == 1  # kept on its record ...
    assert len(await loop.tools.signals(kind="call")) == 1  # ... and counted once by the tool layer
    assert len(await loop.tools.signals(kind="list")) == 1
    assert (await loop.profiles.get("alice")).interactions == 1  # the pattern counted once
    assert (await loop.agent.queue("tg-42", user="alice")).pending == 1
    assert (await loop.agent.queue("web-7", user="alice")).pending == 0
    messages = [r.getMessage() for r in caplog.records]
    assert messages.count("turn_finished") == 1 and messages.count("turn_duplicate") == 1
    [duplicate_log] = [r for r in caplog.records if r.getMessage() == "turn_duplicate"]
    assert duplicate_log.__dict__["channel"] == "web" and duplicate_log.__dict__["duplicate_of"] == first.id

    # 31 s after the last copy the same message is a turn of its own (what it says is known: nothing new).
    clock.advance(seconds=31)
    async with loop.turn("alice", PREFERENCE, session="web-7", channel="web") as third:
        assert third.duplicate_of is None and third.cached_response is None
        await third.finish("Still metric.")
    await loop.turns.drain()
    assert (await loop.turns.get(third.id)).status == "done"
    assert (await loop.profiles.get("alice")).interactions == 2
    assert len([t for t in await _learned(loop) if "metric" in t]) == 1


async def test_a_repeat_of_an_open_turn_learns_its_answer_when_it_comes(turns_loop: learnloop.Loop) -> None:
    loop = turns_loop
    first = await loop.turns.begin("alice", "top products this month", session="tg-1", channel="telegram")
    again = await loop.turns.begin("alice", "Top products this month", session="wa-1", channel="whatsapp")
    assert again.duplicate_of == first.id and again.cached_response is None  # the first is still open
    assert await again.cached() is None
    await first.finish("Boots, scarves, gloves.")
    assert await again.cached() == "Boots, scarves, gloves." and again.cached_response == "Boots, scarves, gloves."
    assert (await loop.turns.get(again.id, user="alice")).response == "Boots, scarves, gloves."


async def test_copies_begun_together_make_one_first_turn(turns_loop: learnloop.Loop) -> None:
    loop = turns_loop
    begun = await asyncio.gather(
        *(loop.turns.begin("alice", "revenue last month?", session=f"s{n}", channel=f"c{n}") for n in range(4))
    )
    firsts = [t for t in begun if t.duplicate_of is None]
    assert len(firsts) == 1 and all(t.duplicate_of == firsts[0].id for t in begun if t is not firsts[0])


async def test_other_words_other_people_and_other_scopes_are_not_duplicates(turns_loop: learnloop.Loop) -> None:
    loop = turns_loop
    first = await loop.turns.begin("alice", "revenue last month?", session="s1")
    assert (await loop.turns.begin("alice", "revenue last month!", session="s2")).duplicate_of is None
    assert (await loop.turns.begin("bob", "revenue last month!", session="s2")).duplicate_of is None
    assert (await loop.turns.begin("alice", "revenue last month!", tags=["eu"])).duplicate_of is None
    assert first.duplicate_of is None
    # Without a user there is no one to follow across sessions.
    await loop.turns.begin(None, "hello", session="kiosk-1")
    assert (await loop.turns.begin(None, "hello", session="kiosk-2")).duplicate_of is None


async def test_a_tool_call_reported_twice_counts_once(turns_loop: learnloop.Loop) -> None:
    loop = turns_loop
    async with loop.turn("alice", "top products and the euro rate", session="s1", channel="web") as turn:
        assert await turn.tool_call("shop_analytics", TOP, ms=80, call_id="call_1") == 1
        assert await turn.tool_call("shop_analytics", TOP, ms=80, call_id="call_1") == 1  # a client's retry
        await turn.tool_call("currency_convert", {"amount": 10}, error="rate service unavailable", ms=5)
        await turn.tool_call("currency_convert", {"amount": 10}, error="rate service unavailable", ms=6)
        await turn.tool_call("currency_convert", {"amount": 10}, result=1.08, ms=40)
        await turn.finish("Here.")
    await loop.turns.drain()
    record = await loop.turns.get(turn.id)
    assert len(record.tool_calls) == 4 and record.steps["signals"]["calls"] == 3
    calls = await loop.tools.signals(session="s1", kind="call")
    assert [(c.tool, c.ok) for c in calls] == [
        ("shop_analytics", True),
        ("currency_convert", False),
        ("currency_convert", True),
    ]
    assert record.tool_calls_json[0] == {"tool": "shop_analytics", "params": TOP, "success": True, "time_ms": 80}
    assert record.tool_calls_json[1]["success"] is False


async def test_messages_that_differ_only_in_redacted_data_are_not_duplicates(turns_loop: learnloop.Loop) -> None:
    loop = turns_loop
    async with loop.turn("alice", "Please email the invoice to alice@example.com", session="w", channel="web") as one:
        await one.finish("Sent.")
    async with loop.turn("alice", "Please email the invoice to bob@example.org", session="w", channel="web") as two:
        assert two.duplicate_of is None  # blanked out, both would read "… to [pii:email]"
        await two.finish("Sent.")


async def test_an_answer_stored_redacted_is_not_served_as_the_cached_one(turns_loop: learnloop.Loop) -> None:
    loop = turns_loop
    async with loop.turn("alice", "Who handles refunds?", session="tg", channel="telegram") as first:
        await first.finish("Write to refunds.desk@example.com, they answer within a day.")
    record = await loop.turns.get(first.id, user="alice")
    assert "refunds.desk@example.com" not in (record.response or "") and record.meta["response_redacted"] is True
    async with loop.turn("alice", "Who handles refunds?", session="wa", channel="whatsapp") as again:
        assert again.duplicate_of == first.id
        assert again.cached_response is None  # the blanked form is not what was sent: answer anew
