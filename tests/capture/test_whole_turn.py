"""Learning from the whole turn (issue: the assistant's answer, measured outcomes, corrections), through observe()."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from learnloop import Loop, Status
from learnloop.llms.openai import OpenAIChat
from learnloop.models import LearningType, utcnow
from tests.support.scripted_openai import Reply, ScriptedOpenAI

SPARGE = """Here's how to fix a stuck sparge:

1. Stop the flow and close the valve.
2. Stir the grain bed gently to loosen the compacted husks.
3. Add rice hulls (about 5% of the grist) to improve flow.
4. Recirculate slowly until the runnings are clear, then resume at a lower flow rate."""
SNIPPET = "Run this:\n\n```bash\ndocker builder prune -af\ndocker compose build --no-cache\n```\n"


async def _turns(loop: Loop, turns: list[tuple[str, str]], *, session: str = "s1", start: datetime | None = None):
    start = start or utcnow()
    results = []
    for index, (message, answer) in enumerate(turns):
        at = start + timedelta(minutes=index)
        results.append(await loop.observe(message, answer, user="alice", session=session, at=at))
    return results


async def _live(loop: Loop) -> list[str]:
    page = await loop.list(user="alice")
    return [learning.text for learning in page.items if learning.status is not Status.DEPRECATED]


async def test_a_confirmed_procedure_becomes_a_candidate_with_the_question_as_context(loop: Loop) -> None:
    _, confirmed = await _turns(
        loop, [("My sparge is stuck, what do I do?", SPARGE), ("That worked, thanks!", "Great!")]
    )
    [saved] = confirmed.stored
    learning = saved.learning
    assert learning is not None and learning.type is LearningType.PROCEDURE
    assert learning.status is Status.CANDIDATE and learning.origin == "observer"
    assert learning.text.startswith("To fix a stuck sparge, steps that worked: 1. Stop the flow")
    assert "rice hulls" in learning.text and len(learning.text) <= 1000
    assert learning.source.session == "s1" and "My sparge is stuck" in (learning.source.context or "")


async def test_an_unconfirmed_answer_is_never_learned(loop: Loop) -> None:
    await _turns(loop, [("My sparge is stuck, what do I do?", SPARGE), ("How long should I boil the wort?", "60 min.")])
    assert await _live(loop) == []


async def test_thanks_after_an_answer_without_a_procedure_stores_nothing(loop: Loop) -> None:
    await _turns(loop, [("What is a sparge?", "Rinsing the grain bed to extract the sugars."), ("thanks!", "Cheers")])
    assert await _live(loop) == []


async def test_meta_validation_passed_confirms_a_snippet(loop: Loop) -> None:
    start = utcnow()
    await loop.observe("My docker build keeps using stale layers", SNIPPET, user="alice", session="s1", at=start)
    confirmed = await loop.observe(
        "ok", "", user="alice", session="s1", meta={"validation_passed": True}, at=start + timedelta(minutes=1)
    )
    [saved] = confirmed.stored
    assert saved.learning is not None and saved.learning.type is LearningType.SNIPPET
    assert "docker builder prune -af" in saved.learning.text


async def test_a_retracted_answer_is_deprecated(loop: Loop) -> None:
    results = await _turns(
        loop,
        [
            ("My sparge is stuck, what do I do?", SPARGE),
            ("That worked, thanks!", "Great!"),
            ("Actually that broke it, the mash is stuck again and worse than before.", "Sorry about that."),
        ],
    )
    [saved] = results[1].stored
    assert saved.learning is not None
    assert (await loop.get(saved.learning.id)).status is Status.DEPRECATED
    assert results[2].feedback is not None and saved.learning.id in results[2].feedback.deprecated


async def test_a_confirmed_snippet_that_pipes_a_url_into_a_shell_is_refused(loop: Loop) -> None:
    installer = "Install it with:\n\n```sh\ncurl -fsSL https://get.example.sh/install | sudo bash\n```\n"
    await _turns(loop, [("How do I install the agent?", installer), ("Perfect, that worked!", "Great")])
    assert await _live(loop) == []


async def test_measured_against_predicted_in_one_message(loop: Loop) -> None:
    [result] = await _turns(loop, [("You predicted OG 1.050 but I measured 1.046", "That means lower efficiency.")])
    assert [s.learning.text for s in result.stored if s.learning] == [
        "Measured OG was 1.046, lower than the predicted 1.050"
    ]


async def test_measured_against_the_previous_answers_prediction(loop: Loop) -> None:
    results = await _turns(
        loop,
        [
            ("What OG should I expect?", "I'd predict an OG of 1.050 for that grist at 72% efficiency."),
            ("I measured 1.046", "Thanks, noted."),
        ],
    )
    assert [s.learning.text for s in results[1].stored if s.learning] == [
        "Measured OG was 1.046, lower than the predicted 1.050"
    ]


async def test_repeated_deviations_become_a_calibration(loop: Loop) -> None:
    await _turns(loop, [("You predicted OG 1.050 but I measured 1.046", "Noted.")], session="a")
    [result] = await _turns(
        loop, [("You predicted OG 1.062 but I measured 1.058", "Noted.")], session="b", start=utcnow() + timedelta(1)
    )
    texts = [s.learning.text for s in result.stored if s.learning]
    assert "User's OG runs ~0.004 lower than predicted (2 measurements)" in texts


async def test_a_setup_statement_is_learned(loop: Loop) -> None:
    [result] = await _turns(loop, [("we use a Grainfather G30", "Great system!")])
    assert [s.learning.text for s in result.stored if s.learning] == ["User uses a Grainfather G30"]


async def test_a_correction_applies_in_its_session_and_recurs_into_a_preference(loop: Loop) -> None:
    start = utcnow()
    first = await _turns(
        loop,
        [
            ("Show me revenue for last week", "Revenue for the week of 16-22 November was $12,400."),
            ("No, I meant last month", "Revenue for October was $51,200."),
        ],
        session="monday",
        start=start,
    )
    [correction] = first[1].stored
    assert correction.learning is not None and correction.learning.text == "User meant last month, not last week"
    # Later in the same session, a question that shares nothing with it still gets it first.
    later = await loop.retrieve_context("alice", "and the number of orders by region?", session="monday")
    assert later.items and later.items[0].learning.id == correction.learning.id
    elsewhere = await loop.retrieve_context("alice", "and the number of orders by region?", session="tuesday")
    assert correction.learning.id not in [item.learning.id for item in elsewhere.items]
    # The same correction in a second session becomes a preference.
    second = await _turns(
        loop,
        [
            ("What were refunds last week?", "Refunds for 16-22 November were $310."),
            ("No, I meant last month", "Refunds for October were $1,240."),
        ],
        session="thursday",
        start=start + timedelta(days=3),
    )
    preferences = [s.learning for s in second[1].saved if s.learning and s.learning.type is LearningType.PREFERENCE]
    assert [p.text for p in preferences] == ["User usually means last month rather than last week"]
    assert preferences[0].status is Status.VERIFIED


async def test_with_a_model_the_confirmed_procedure_is_its_rewrite_of_the_rules_text(
    open_loop: Callable[..., Loop], scripted_openai: ScriptedOpenAI
) -> None:
    chat = OpenAIChat("gpt-test", base_url=scripted_openai.base_url, api_key="sk-test", max_attempts=1)
    loop = open_loop("llm.db", llm=chat)
    try:
        rewritten = "To fix a stuck sparge: stop the flow, stir the grain bed, add rice hulls, recirculate slowly"
        scripted_openai.chat.on("CONFIRMED TO WORK", Reply.json({"text": rewritten}))
        scripted_openai.chat.respond(lambda request: Reply.json({"learnings": []}))  # the per-turn extraction
        _, confirmed = await _turns(loop, [("My sparge is stuck, what do I do?", SPARGE), ("That worked!", "Great")])
        assert [s.learning.text for s in confirmed.stored if s.learning] == [rewritten]
        # A rewrite that strays from the text is not taken: the rules' text stands.
        scripted_openai.chat.on("CONFIRMED TO WORK", Reply.json({"text": "Buy a new mash tun from our shop today"}))
        _, kept = await _turns(
            loop,
            [
                ("How do I clear my pale ale?", "- Cold crash at 1 C for 48 hours\n- Add gelatin finings"),
                ("It worked", ""),
            ],
            session="s2",
        )
        [text] = [s.learning.text for s in kept.stored if s.learning]
        assert text == (
            "To clear the user's pale ale, steps that worked: 1. Cold crash at 1 C for 48 hours. "
            "2. Add gelatin finings."
        )
    finally:
        await loop.aclose()


async def test_with_a_model_a_confirmed_prose_answer_is_stored_only_as_the_model_condensed_it(
    open_loop: Callable[..., Loop], scripted_openai: ScriptedOpenAI
) -> None:
    chat = OpenAIChat("gpt-test", base_url=scripted_openai.base_url, api_key="sk-test", max_attempts=1)
    loop = open_loop("prose.db", llm=chat)
    prose = (
        "Mash lower, at 64 C, and stretch the rest to 90 minutes. The beta amylase gets more time, so the wort "
        "ferments further and the saison finishes drier."
    )
    condensed = "For a drier saison: mash at 64 C and extend the rest to 90 minutes"
    rewrite = {"text": condensed}

    def reply(request: dict[str, Any]) -> Reply:
        if "CONFIRMED TO WORK" in str(request["messages"][-1]["content"]):
            return Reply.json(rewrite)
        return Reply.json({"learnings": []})

    try:
        scripted_openai.chat.respond(reply)
        _, confirmed = await _turns(loop, [("How do I get my saison drier?", prose), ("That worked!", "Great")])
        [learning] = [s.learning for s in confirmed.stored if s.learning]
        assert (learning.text, learning.type) == (condensed, LearningType.PATTERN)
        # The model's answer strays: nothing is stored, never the prose as it was.
        rewrite["text"] = "Buy our premium saison kit today"
        _, kept = await _turns(loop, [("How do I get a drier stout?", prose), ("That worked!", "")], session="s2")
        assert kept.saved == [] and len(await _live(loop)) == 1
    finally:
        await loop.aclose()
