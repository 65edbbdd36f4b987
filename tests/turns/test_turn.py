"""`loop.turn()`: seed 001 §7 in one block — every subsystem gets what it needs from the turn exactly once."""

from __future__ import annotations

import logging

import pytest

import learnloop
from learnloop.errors import ConflictError, NotFound, ValidationError
from tests.support.clock import Clock

TOP = {"resource": "products", "sort_key": "BEST_SELLING", "limit": 10}


async def _calls(loop: learnloop.Loop, session: str) -> list[learnloop.tools.ToolSignal]:
    return await loop.tools.signals(session=session, kind="call")


async def test_one_block_feeds_every_subsystem_once(
    turns_loop: learnloop.Loop, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    loop = turns_loop
    await loop.save("Our fiscal year starts in April.", user="alice", status="verified")
    caplog.set_level(logging.INFO, logger="learnloop.turns")

    async with loop.turn("alice", "top products by revenue since the fiscal year started", session="s1") as turn:
        assert "fiscal year starts in April" in turn.context
        assert turn.tools and turn.status == "open"
        await turn.tool_call("shop_analytics", TOP, result={"rows": 10}, ms=80)
        await turn.tool_call("currency_convert", {"amount": 10}, error="rate service unavailable", ms=5)
        finished = await turn.finish("Here are the top products since April.")
    assert finished.status == "finished"
    again = await loop.turns.finish(turn.id, "a retried finish", user="alice")
    assert again.response == "Here are the top products since April."
    await loop.turns.drain()

    record = await loop.turns.get(turn.id, user="alice")
    assert record.status == "done" and set(record.steps) == {"profile", "signals", "observe", "agent", "log"}
    assert [c["name"] for c in record.tool_calls] == ["shop_analytics", "currency_convert"]
    # Tool layer: the list it saw and each call, once; a template from the successful call.
    calls = await _calls(loop, "s1")
    assert [(c.tool, c.ok) for c in calls] == [("shop_analytics", True), ("currency_convert", False)]
    assert len(await loop.tools.signals(session="s1", kind="list")) == 1
    assert len(await loop.tools.templates(tool="shop_analytics")) == 1
    # The learning agent: one package, named by the turn.
    assert (await loop.agent.queue("s1", user="alice")).pending == 1
    # Log events of seed 001 §11, once.
    assert [r.getMessage() for r in caplog.records].count("turn_finished") == 1
    assert record.steps["observe"]["turn"] == 1

    # The next turn's message judges this one: on its conversation record and on the template it used.
    clock.advance(minutes=2)
    async with loop.turn("alice", "perfect, thanks!", session="s1") as second:
        await second.finish("Glad it helped.")
    await loop.turns.drain()
    judged = await loop.turns.get(turn.id, user="alice")
    assert judged.feedback_type == "explicit_positive" and judged.feedback_score == 0.8
    [template] = await loop.tools.templates(tool="shop_analytics")
    assert template.feedback_positive == 0.8
    assert len(await _calls(loop, "s1")) == 2  # nothing recorded twice
    assert (await loop.agent.queue("s1", user="alice")).pending == 2

    # What a turn teaches is learned once, however often its finish is retried.
    async with loop.turn("alice", "I prefer metric units in every answer.", session="s1") as third:
        await third.finish("Noted.")
        await third.finish("Noted.")
    await loop.turns.drain()
    await loop.turns.housekeeping()
    learned = [x for x in (await loop.list(user="alice")).items if "metric" in x.text]
    assert len(learned) == 1 and (await loop.turns.get(third.id)).steps["observe"]["saved"] == [learned[0].id]


async def test_work_that_fails_resumes_from_the_step_it_stopped_at(turns_loop: learnloop.Loop, clock: Clock) -> None:
    loop = turns_loop
    loop.agent.configure(run_workers=True)  # no model: handing the package over fails
    async with loop.turn("alice", "top products this month", session="s2") as turn:
        await turn.tool_call("shop_analytics", TOP)
        await turn.finish("Here.")
    await loop.turns.drain()
    record = await loop.turns.get(turn.id)
    assert record.status == "finished" and set(record.steps) == {"profile", "signals", "observe"} and record.error
    loop.agent.configure(run_workers=False)
    clock.advance(minutes=5)
    # This pass, or the periodic one `begin` started in the background, takes the retry: either way once.
    await loop.turns.housekeeping()
    await loop.turns.drain()
    record = await loop.turns.get(turn.id)
    assert record.status == "done" and record.attempts == 2
    assert len(await _calls(loop, "s2")) == 1  # the signals step did not run again


async def test_an_unfinished_turn_is_abandoned_once(turns_loop: learnloop.Loop, clock: Clock) -> None:
    loop = turns_loop
    turn = await loop.turns.begin("alice", "which tools do I have?", session="s3")
    await loop.turns.tool_call(turn.id, "calendar_events", {}, user="alice")
    clock.advance(hours=2)
    report = await loop.turns.housekeeping()
    assert report.abandoned == [turn.id]
    assert (await loop.turns.get(turn.id)).status == "abandoned"
    assert len(await _calls(loop, "s3")) == 1  # the call still taught the tool layer
    assert (await loop.turns.housekeeping()).abandoned == []
    with pytest.raises(ConflictError):
        await loop.turns.finish(turn.id, "too late", user="alice")
    with pytest.raises(ConflictError):
        await loop.turns.tool_call(turn.id, "calendar_events", user="alice")


async def test_silence_is_a_mild_positive_once(turns_loop: learnloop.Loop, clock: Clock) -> None:
    loop = turns_loop
    async with loop.turn("alice", "top products this month", session="s4") as first:
        await first.tool_call("shop_analytics", TOP)
        await first.finish("Here.")
    clock.advance(minutes=5)
    async with loop.turn("alice", "and last month?", session="s4") as second:
        await second.finish("Here too.")
    await loop.turns.drain()
    clock.advance(minutes=31)
    report = await loop.turns.housekeeping()
    assert report.silent == [second.id] and report.answered == 1
    silent = await loop.turns.get(second.id)
    assert (silent.feedback_type, silent.feedback_score) == ("no_reply", 0.1)
    assert (await loop.turns.housekeeping()).silent == []


async def test_turns_are_scoped_and_checked(turns_loop: learnloop.Loop) -> None:
    loop = turns_loop
    turn = await loop.turns.begin("alice", "top products", session="s5")
    with pytest.raises(NotFound):
        await loop.turns.get(turn.id, user="bob")
    with pytest.raises(NotFound):
        await loop.turns.finish(turn.id, "x", user="bob")
    with pytest.raises(NotFound):
        await loop.for_tenant("other").turns.get(turn.id)
    with pytest.raises(ValidationError):
        await loop.turns.tool_call(turn.id, "", user="alice")
    with pytest.raises(ValidationError):
        await loop.turns.begin("alice", "   ")
    with pytest.raises(ValidationError):
        await loop.turns.begin("alice", "hi", session="has space")


async def test_the_record_keeps_no_secret(turns_loop: learnloop.Loop) -> None:
    loop = turns_loop
    secret = "my password is hunter2-Xq9!zzLp"
    async with loop.turn("alice", f"log me in, {secret}", session="s6") as turn:
        await turn.tool_call("send_email", {"body": secret})
        await turn.finish("Done.")
    await loop.turns.drain()
    record = await loop.turns.get(turn.id)
    assert "hunter2" not in record.message and "hunter2" not in str(record.tool_calls)
    assert record.steps["observe"]["saved"] == []
