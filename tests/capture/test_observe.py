"""loop.observe(): feedback on the previous turn, rule and LLM extraction, duplicates, recalled context."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import timedelta

import pytest

from learnloop import Loop, Status
from learnloop.llms.openai import OpenAIChat
from learnloop.models import utcnow
from tests.support.scripted_openai import Reply, ScriptedOpenAI

CORRECTION = "No, it's 3.5 L/hr on my Grainfather Gen 1."
PREDICTION = "With a typical boil-off rate of 4 L/hr you'll need 32 L pre-boil."


async def test_a_correction_becomes_a_candidate_and_thanks_promote_it(loop: Loop) -> None:
    start = utcnow()
    first = await loop.observe(CORRECTION, PREDICTION, user="alice", session="s1", at=start)
    [saved] = first.stored
    assert saved.learning is not None
    learning = saved.learning
    assert learning.status is Status.CANDIDATE and learning.origin == "observer"
    assert "3.5 L/hr" in learning.text and learning.source.session == "s1"
    second = await loop.observe(
        "Thanks, that worked perfectly!",
        "Glad it helped.",
        user="alice",
        session="s1",
        at=start + timedelta(seconds=40),
    )
    assert second.feedback is not None and second.feedback.type == "explicit_positive"
    assert second.feedback.promoted == [learning.id]
    assert (await loop.get(learning.id)).status is Status.VERIFIED


async def test_negative_feedback_reaches_the_learnings_that_were_used(loop: Loop) -> None:
    verified = await loop.save(
        "Grainfather Gen 1 boil-off rate is ~3.5 L/hr", user="alice", category="equipment", status="verified"
    )
    candidate = await loop.save("Mash at 64 C for a dry finish", user="alice", category="technique")
    assert verified.learning is not None and candidate.learning is not None
    start = utcnow()
    question = "How much water boils off and what mash temperature should I use?"
    used = await loop.retrieve_context("alice", question)
    assert {i.learning.id for i in used.items} == {verified.learning.id, candidate.learning.id}
    await loop.observe(question, "About 3.5 L/hr; mash at 64 C.", user="alice", session="s2", retrieved=used, at=start)
    reaction = await loop.observe(
        "This is useless.", "Sorry!", user="alice", session="s2", at=start + timedelta(minutes=1)
    )
    assert reaction.feedback is not None and reaction.feedback.type == "explicit_negative"
    # Frustration says little about which learning misled the answer: the verified one is demoted, nothing is lost.
    assert reaction.feedback.demoted == [verified.learning.id]
    assert reaction.feedback.deprecated == []
    assert (await loop.get(verified.learning.id)).status is Status.CANDIDATE
    kept = await loop.get(candidate.learning.id)
    assert (kept.status, kept.failures) == (Status.CANDIDATE, 1)


async def test_negative_feedback_leaves_shared_knowledge_alone(loop: Loop) -> None:
    shared = await loop.save("Club kettle boil-off is 5 L/hr", user=None, category="equipment", status="verified")
    assert shared.learning is not None
    start = utcnow()
    used = await loop.retrieve_context("alice", "club kettle boil-off")
    assert [i.learning.id for i in used.items] == [shared.learning.id]
    await loop.observe("club kettle boil-off?", "5 L/hr.", user="alice", session="s6", retrieved=used, at=start)
    reaction = await loop.observe(
        "No, that's wrong", "Sorry.", user="alice", session="s6", at=start + timedelta(minutes=1)
    )
    assert reaction.feedback is not None and reaction.feedback.score < 0
    assert reaction.feedback.demoted == [] and reaction.feedback.deprecated == []
    assert (await loop.get(shared.learning.id)).status is Status.VERIFIED


async def test_the_same_message_within_30_seconds_is_not_learned_twice(loop: Loop) -> None:
    start = utcnow()
    first = await loop.observe(CORRECTION, PREDICTION, user="alice", session="s3", at=start)
    again = await loop.observe(CORRECTION, PREDICTION, user="alice", session="s3", at=start + timedelta(seconds=10))
    assert first.stored and again.duplicate and again.saved == []
    later = await loop.observe(CORRECTION, PREDICTION, user="alice", session="s3", at=start + timedelta(seconds=45))
    assert not later.duplicate and [r.action for r in later.saved] == ["skipped"]


async def test_the_same_message_on_another_channel_and_session_is_a_duplicate_of_the_first(loop: Loop) -> None:
    start = utcnow()
    first = await loop.observe(CORRECTION, PREDICTION, user="alice", session="tg-1", channel="telegram", at=start)
    copy = f"  {CORRECTION.upper()} "
    again = await loop.observe(
        copy, PREDICTION, user="alice", session="web-1", channel="web", at=start + timedelta(seconds=10)
    )
    assert first.stored and again.duplicate and again.saved == [] and again.feedback is None
    assert (again.session, again.turn) == (first.session, first.turn)  # names the turn it repeats
    assert not (await loop.observe(CORRECTION, PREDICTION, user="bob", session="web-1", at=start)).duplicate
    later = await loop.observe(
        CORRECTION, PREDICTION, user="alice", session="web-1", channel="web", at=start + timedelta(seconds=41)
    )
    assert not later.duplicate and later.turn == 1  # 31 s after the last copy: the first turn of web-1


async def test_recalled_context_is_never_extracted_again(loop: Loop) -> None:
    await loop.save("User prefers mashing at 66 C", user="alice", category="technique", status="verified")
    recalled = await loop.retrieve_context("alice", "what mash temperature do I like?")
    assert recalled.items
    echoed = f"{recalled.block}\nI prefer mashing at 66 C, as you know."
    result = await loop.observe(echoed, "Right, 66 C it is.", user="alice", session="s4", retrieved=recalled)
    assert result.stored == []
    assert (await loop.list()).total == 1


async def test_replaying_a_conversation_through_observe_stores_nothing_new(loop: Loop) -> None:
    turns = [
        (CORRECTION, PREDICTION),
        ("The US-05 attenuated way more than 75%, I got 82%", "US-05 should reach about 75% attenuation."),
        ("I prefer mashing at 66 C for pale ales", "Noted."),
        ("What should I brew next?", "How about a saison?"),
    ]
    start = utcnow()
    for n, (user, assistant) in enumerate(turns):
        await loop.observe(user, assistant, user="alice", session="first", at=start + timedelta(minutes=n))
    stored = (await loop.list()).total
    assert stored >= 3
    for n, (user, assistant) in enumerate(turns):
        result = await loop.observe(
            user, assistant, user="alice", session="second", at=start + timedelta(hours=1, minutes=n)
        )
        assert all(r.action == "skipped" for r in result.saved)
    assert (await loop.list()).total == stored


@pytest.fixture
async def llm_loop(open_loop: Callable[..., Loop], scripted_openai: ScriptedOpenAI) -> AsyncIterator[Loop]:
    chat = OpenAIChat("gpt-test", base_url=scripted_openai.base_url, api_key="sk-test", max_attempts=1)
    loop = open_loop("llm.db", llm=chat)
    yield loop
    await loop.aclose()


async def test_the_llm_extractor_runs_once_per_turn(llm_loop: Loop, scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.reply(
        Reply.json(
            {
                "learnings": [
                    {"text": "User's fermentation chamber holds 2 fermenters", "type": "fact", "category": "equipment"}
                ]
            }
        )
    )
    result = await llm_loop.observe(
        "My fermentation chamber only fits 2 fermenters.", "Good to know.", user="alice", session="s5"
    )
    assert len(scripted_openai.chat_requests) == 1
    texts = [r.learning.text for r in result.stored if r.learning is not None]
    assert "User's fermentation chamber holds 2 fermenters" in texts
    stored = [r.learning for r in result.stored if r.learning is not None]
    assert all(learning.status is Status.CANDIDATE and learning.origin == "observer" for learning in stored)


async def test_concurrent_copies_of_one_message_count_once(loop: Loop) -> None:
    import asyncio

    verified = await loop.save(
        "Grainfather Gen 1 boil-off rate is ~3.5 L/hr", user="alice", category="equipment", status="verified"
    )
    assert verified.learning is not None
    start = utcnow()
    used = await loop.retrieve_context("alice", "boil-off rate")
    await loop.observe("boil-off rate?", "3.5 L/hr", user="alice", session="s7", retrieved=used, at=start)
    later = start + timedelta(minutes=1)
    first, second = await asyncio.gather(
        loop.observe("This is useless.", "Sorry", user="alice", session="s7", at=later),
        loop.observe("This is useless.", "Sorry", user="alice", session="s7", at=later),
    )
    assert sorted([first.duplicate, second.duplicate]) == [False, True]
    assert (await loop.get(verified.learning.id)).status is Status.CANDIDATE  # demoted once, not deprecated


async def test_moving_to_a_new_topic_ends_a_streak_without_a_failure(loop: Loop) -> None:
    saved = await loop.save("Mash at 66 C for a drier finish", user="alice", category="technique")
    assert saved.learning is not None
    start = utcnow()
    used = await loop.retrieve_context("alice", "mash temperature")
    await loop.observe("what mash temperature?", "66 C", user="alice", session="s8", retrieved=used, at=start)
    reaction = await loop.observe(
        "Tell me about the history of the Roman empire",
        "…",
        user="alice",
        session="s8",
        at=start + timedelta(minutes=1),
    )
    # The learned model may call it unclear or a statement about something else: the streak ends all the same.
    assert reaction.feedback is not None
    assert reaction.feedback.type in {"follow_up_new_topic", "new_statement", "unclear"}
    assert reaction.feedback.reset == [saved.learning.id]
    learning = await loop.get(saved.learning.id)
    assert (learning.streak, learning.failures, learning.hits) == (0, 0, 1)


async def test_the_runs_tags_scope_what_a_turn_learns(loop: Loop) -> None:
    from learnloop.models import Filters

    said = "For reference, we use a Grainfather G30 for every batch."
    staging = await loop.observe(said, "Noted.", user="ops", session="s1", tags=["staging"])
    production = await loop.observe(said, "Noted.", user="ops", session="s2", tags=["Production"])
    stored = [r for r in (*staging.saved, *production.saved) if r.stored]
    assert len(stored) == 2  # the same text in two scopes is two learnings
    assert [r.learning.tags for r in stored if r.learning] == [["staging"], ["production"]]
    found = await loop.retrieve_context("ops", "Which Grainfather do we use?", filters=Filters(tags=["staging"]))
    assert [i.learning.tags for i in found.items] == [["staging"]]


async def test_a_statement_about_something_else_deprecates_nothing(loop: Loop) -> None:
    """The relevance issue's Irish-moss scenario: a preference after an answer is not a correction of it."""
    noted = await loop.save("Our mash efficiency is usually 72%.", user="alice", category="equipment")
    assert noted.learning is not None
    start = utcnow()
    question = "What mash efficiency should I plan my IPA for?"
    used = await loop.retrieve_context("alice", question)
    assert [i.learning.text for i in used.items] == ["Our mash efficiency is usually 72%."]
    await loop.observe(question, "Plan for 72%.", user="alice", session="moss", retrieved=used, at=start)
    reaction = await loop.observe(
        "I prefer using Irish moss rather than whirlfloc.", user="alice", session="moss", at=start
    )
    assert reaction.feedback is not None and reaction.feedback.type == "new_statement"
    assert reaction.feedback.deprecated == [] and reaction.feedback.demoted == []
    assert (await loop.get(used.items[0].learning.id)).status is not Status.DEPRECATED


async def test_an_answer_that_did_not_work_deprecates_what_it_used(loop: Loop) -> None:
    """Seed 004: what a failed answer used is deprecated with the reason and the turn, is not returned again,
    and a person can restore it."""
    saved = await loop.save(
        "To fix a stuck sparge, stir the grain bed and recirculate slowly.",
        user="alice",
        category="technique",
        status="verified",
    )
    assert saved.learning is not None
    start = utcnow()
    question = "How do I fix a stuck sparge?"
    used = await loop.retrieve_context("alice", question)
    assert [i.learning.id for i in used.items] == [saved.learning.id] and used.items[0].used
    await loop.observe(question, "Stir the grain bed and recirculate slowly.", user="alice", session="sp",
                       retrieved=used, at=start)  # fmt: skip
    reaction = await loop.observe("that didn't work", user="alice", session="sp", at=start + timedelta(minutes=5))
    assert reaction.feedback is not None and reaction.feedback.type == "failure"
    assert reaction.feedback.deprecated == [saved.learning.id]
    gone = await loop.get(saved.learning.id)
    assert gone.status is Status.DEPRECATED and "session sp, turn 1" in (gone.status_reason or "")
    assert (await loop.retrieve_context("alice", question)).items == []
    back = await loop.restore(saved.learning.id, user="alice", status="verified", actor="person:ops")
    assert back.status is Status.VERIFIED


async def test_feedback_from_observe_is_logged_once_as_seed_001_says(
    loop: Loop, caplog: pytest.LogCaptureFixture
) -> None:
    start = utcnow()
    caplog.set_level("INFO", logger="learnloop.capture")
    await loop.observe("How much water boils off?", "About 3.5 L/hr.", user="alice", session="log", at=start)
    await loop.observe("Perfect, thanks!", "Cheers.", user="alice", session="log", at=start + timedelta(minutes=1))
    events = [r for r in caplog.records if getattr(r, "event", None) == "feedback_recorded"]
    assert [(getattr(r, "type", None), getattr(r, "turn", None)) for r in events] == [("explicit_positive", 2)]
