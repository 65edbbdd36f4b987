"""The conversation record (`stores.conversations`) on every backend: the duplicate window of seed 001 §8.6 —
the user's latest message repeated within the window, in any session and on any channel, is recorded as a
duplicate of the first turn, atomically, reads the first turn's response, runs no work and holds its own tool
calls — and a tool call reported twice under one id recorded once."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime, timedelta

from learnloop.models import utcnow
from learnloop.stores.base import Store, TurnRecord
from learnloop.stores.conversations import NewTurn
from tests.stores.test_contract import ALICE, BOB, OTHER_TENANT, TENANT
from tests.stores.test_parts_contract import part

WINDOW = 30.0


def new_turn(turn_id: str, at: datetime, *, session: str = "s1", channel: str = "", digest: str = "h1") -> NewTurn:
    return NewTurn(turn_id, session, channel, "revenue last month?", {}, at, at + timedelta(hours=1), digest)


async def test_a_repeat_on_another_channel_within_the_window_is_a_duplicate_of_the_first(store: Store) -> None:
    conversations = part(store, "conversations")
    start = utcnow()
    first = await conversations.begin_turn(ALICE, new_turn("a", start, channel="telegram"), WINDOW)
    assert first.duplicate_of is None and first.status == "open" and first.channel == "telegram"
    again = await conversations.begin_turn(
        ALICE, new_turn("b", start + timedelta(seconds=10), session="web-1", channel="web"), WINDOW
    )
    assert again.duplicate_of == "a" and again.status == "done" and again.channel == "web"
    assert again.response is None  # the first is still open
    # A third copy names the first turn, not the duplicate it follows.
    third = await conversations.begin_turn(ALICE, new_turn("c", start + timedelta(seconds=20)), WINDOW)
    assert third.duplicate_of == "a"
    await conversations.finish_turn(ALICE, "a", "Revenue was 12,400 EUR.", {}, start + timedelta(seconds=21))
    for duplicate in ("b", "c"):
        found = await conversations.get_turn(ALICE, duplicate)
        assert found is not None and found.response == "Revenue was 12,400 EUR."
    # Its finish changes nothing and returns the cached answer; it has no work to claim.
    receipt = await conversations.finish_turn(ALICE, "b", "another answer", {}, start + timedelta(seconds=22))
    assert not receipt.first and receipt.turn.response == "Revenue was 12,400 EUR."
    claimed = await conversations.claim_work("w", start + timedelta(seconds=23), 60.0)
    assert claimed is not None and claimed.id == "a"
    assert await conversations.claim_work("w", start + timedelta(seconds=23), 60.0) is None
    # Tool calls reported on a duplicate are kept on its record.
    assert await conversations.add_tool_call(ALICE, "b", {"name": "shop"}, start, 10) == 1
    listed = await conversations.list_turns(ALICE)
    assert {t.id: t.duplicate_of for t in listed} == {"a": None, "b": "a", "c": "a"}
    assert [t.id for t in await conversations.list_turns(ALICE, channel="web")] == ["b"]


async def test_the_window_is_per_user_and_tenant_bounded_in_time_and_ends_at_another_message(store: Store) -> None:
    conversations = part(store, "conversations")
    start = utcnow()
    await conversations.begin_turn(ALICE, new_turn("a", start), WINDOW)
    assert (await conversations.begin_turn(BOB, new_turn("b", start), WINDOW)).duplicate_of is None
    assert (await conversations.begin_turn(OTHER_TENANT, new_turn("a", start), WINDOW)).duplicate_of is None
    later = await conversations.begin_turn(ALICE, new_turn("c", start + timedelta(seconds=31)), WINDOW)
    assert later.duplicate_of is None  # 31 s after the first: a new turn
    other = await conversations.begin_turn(ALICE, new_turn("d", start + timedelta(seconds=35), digest="h2"), WINDOW)
    back = await conversations.begin_turn(ALICE, new_turn("e", start + timedelta(seconds=40)), WINDOW)
    assert other.duplicate_of is None and back.duplicate_of is None  # not the latest message any more
    off = await conversations.begin_turn(ALICE, new_turn("f", start + timedelta(seconds=41)), 0.0)
    assert off.duplicate_of is None  # the window turned off
    # Without a user there is no person to follow across sessions: only the session's own latest counts.
    await conversations.begin_turn(TENANT, new_turn("g", start, session="kiosk-1"), WINDOW)
    assert (
        await conversations.begin_turn(TENANT, new_turn("h", start, session="kiosk-2"), WINDOW)
    ).duplicate_of is None
    assert (await conversations.begin_turn(TENANT, new_turn("i", start, session="kiosk-1"), WINDOW)).duplicate_of == "g"


async def test_copies_begun_at_once_make_exactly_one_first_turn(store: Store) -> None:
    conversations = part(store, "conversations")
    start = utcnow()
    begun = await asyncio.gather(
        *(
            conversations.begin_turn(ALICE, new_turn(f"t{n}", start, channel=f"c{n}", session=f"s{n}"), WINDOW)
            for n in range(6)
        )
    )
    firsts = [t for t in begun if t.duplicate_of is None]
    assert len(firsts) == 1 and {t.duplicate_of for t in begun if t.duplicate_of} == {firsts[0].id}


async def test_a_tool_call_reported_twice_under_one_id_is_recorded_once(store: Store) -> None:
    conversations = part(store, "conversations")
    start = utcnow()
    await conversations.begin_turn(ALICE, new_turn("a", start), WINDOW)
    call = {"name": "shop", "arguments": {"limit": 10}, "result": None, "error": None, "ms": 80, "id": "call_1"}
    assert await conversations.add_tool_call(ALICE, "a", call, start, 10) == 1
    assert await conversations.add_tool_call(ALICE, "a", call, start, 10) == 1
    assert await conversations.add_tool_call(ALICE, "a", {**call, "id": "call_2"}, start, 10) == 2
    found = await conversations.get_turn(ALICE, "a")
    assert found is not None and [c["id"] for c in found.tool_calls] == ["call_1", "call_2"]
    assert found.tool_calls_json[0] == {"tool": "shop", "params": {"limit": 10}, "success": True, "time_ms": 80}


async def test_a_duplicate_is_no_follow_up_and_no_previous_turn(store: Store) -> None:
    conversations = part(store, "conversations")
    start = utcnow()
    await conversations.begin_turn(ALICE, new_turn("a", start), WINDOW)
    await conversations.finish_turn(ALICE, "a", "answer", {}, start + timedelta(seconds=1))
    await conversations.begin_turn(ALICE, new_turn("b", start + timedelta(seconds=5)), WINDOW)
    previous = await conversations.previous_turn(ALICE, "s1", start + timedelta(seconds=6))
    assert previous is not None and previous.id == "a"
    claimed = await conversations.claim_work("w", start + timedelta(seconds=2), 60.0)
    assert claimed is not None
    await conversations.complete_work(claimed)
    # Half an hour of silence after the answer: the duplicate sent 5 s later is not a reply to it.
    verdict = await conversations.settle_silence(start + timedelta(hours=1), 1800.0, "no_reply", 0.1)
    assert [t.id for t in verdict.silent] == ["a"] and verdict.answered == 0


async def test_the_learning_figures_cut_per_channel_read_each_channels_turns(store: Store) -> None:
    conversations, metrics = part(store, "conversations"), part(store, "learning_metrics")
    start = utcnow()
    calls = {
        "web": [{"name": "shop", "error": None, "id": "c1"}, {"name": "fx", "error": "timeout"}],
        "telegram": [{"name": "shop", "error": None}, {"name": "shop", "error": None}],  # the same call twice
    }
    hit = {"id": 1, "intent": "products", "confidence": 0.5}
    for number, (channel, made) in enumerate(calls.items()):
        at = start + timedelta(minutes=number)
        await conversations.begin_turn(ALICE, new_turn(channel, at, channel=channel, digest=channel), WINDOW)
        for call in made:
            await conversations.add_tool_call(ALICE, channel, call, at, 10)
        await conversations.finish_turn(ALICE, channel, "answer", {}, at)
        claimed = await conversations.claim_work("w", at + timedelta(seconds=1), 60.0)
        assert claimed is not None and claimed.id == channel
        signals = {"hits": [hit], "misses": []} if channel == "web" else {"hits": [], "misses": [hit]}
        await conversations.commit_step(claimed, "signals", signals)
        await conversations.complete_work(claimed)
    said = TurnRecord("tg-1", 0, "h", (), (), (), start, channel="telegram")
    _, number = await store.claim_turn(ALICE, said, WINDOW)
    assert number is not None
    await store.put_turn(ALICE, replace(said, turn=number, feedback_type="explicit_positive", feedback_score=0.8))
    since = start - timedelta(hours=1)

    web = await metrics.learning_metric_rows(ALICE, since, 3600, "web")
    assert web.calls_total == (2, 1) and web.feedback == []
    assert [(h, m) for _, h, m, _ in web.turn_templates] == [(1, 0)]
    telegram = await metrics.learning_metric_rows(ALICE, since, 3600, "telegram")
    assert telegram.calls_total == (1, 1)  # counted as the tool layer counted them
    assert [(kind, n) for _, kind, n, _ in telegram.feedback] == [("explicit_positive", 1)]
    assert [(h, m) for _, h, m, _ in telegram.turn_templates] == [(0, 1)]
    assert (await metrics.learning_metric_rows(BOB, since, 3600, "web")).calls_total == (0, 0)
    every = await metrics.learning_metric_rows(ALICE, since, 3600)
    assert every.turn_templates is None and len(every.feedback) == 1
