"""The dedupe adjudicator against a real (scripted) OpenAI-compatible server: grey-zone pairs only, answers
validated, and every failure leaves the rules' decision (both kept, linked for review)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from learnloop import Loop
from learnloop.capture.adjudicator import Adjudicator
from learnloop.llms.openai import OpenAIChat
from tests.support.scripted_openai import Reply, ScriptedOpenAI

OLD = "The user's editor is Vim."
NEW = "The user's editor is Emacs."


@pytest.fixture
async def llm_loop(open_loop: Callable[..., Loop], scripted_openai: ScriptedOpenAI) -> AsyncIterator[Loop]:
    chat = OpenAIChat("gpt-test", base_url=scripted_openai.base_url, api_key="sk-test", max_attempts=1)
    loop = open_loop("adjudicated.db", llm=chat)
    adjudicator = loop.engine.adjudicator
    assert isinstance(adjudicator, Adjudicator)
    adjudicator.timeout = 1.0
    yield loop
    await loop.aclose()


async def test_a_valid_answer_decides_the_grey_zone(llm_loop: Loop, scripted_openai: ScriptedOpenAI) -> None:
    await llm_loop.save(OLD, user="alice")
    scripted_openai.reply(Reply.json({"action": "new_version", "merged_text": None, "reason": "switched editors"}))
    saved = await llm_loop.save(NEW, user="alice")
    assert saved.action == "new_version" and "switched editors" in saved.reason and "gpt-test" in saved.reason
    [request] = scripted_openai.chat_requests
    prompt = "\n".join(str(m["content"]) for m in request["messages"])
    assert OLD in prompt and NEW in prompt and request.get("response_format") == {"type": "json_object"}


async def test_a_merge_must_keep_every_value(llm_loop: Loop, scripted_openai: ScriptedOpenAI) -> None:
    await llm_loop.save("Boil-off on the Grainfather is 3.5 L/hr.", user="bob")
    scripted_openai.reply(
        Reply.json({"action": "merge", "merged_text": "The Grainfather boils off a lot.", "reason": "x"})
    )
    dropped = await llm_loop.save("Boil-off on the Grainfather is 4 L/hr in winter.", user="bob")
    assert dropped.action in ("created", "new_version")  # a merge that drops 3.5 L/hr is not applied


@pytest.mark.parametrize(
    "answer",
    [
        Reply.text("not json at all"),
        Reply.json({"action": "obliterate", "reason": "?"}),
        Reply.json({"action": "merge", "merged_text": "", "reason": "empty"}),
        Reply.json({"action": "merge", "merged_text": "x" * 5000, "reason": "too long"}),
        Reply.error(500, "boom"),
        Reply.json({"action": "skip", "reason": "slow"}).after(3.0),
    ],
    ids=["invalid-json", "unknown-action", "empty-merge", "oversize-merge", "http-500", "timeout"],
)
async def test_any_failure_keeps_both_and_links_them(
    llm_loop: Loop, scripted_openai: ScriptedOpenAI, answer: Reply
) -> None:
    await llm_loop.save(OLD, user="carol")
    scripted_openai.reply(answer)
    saved = await llm_loop.save(NEW, user="carol")
    assert saved.action == "created" and saved.link == "possible_conflict"
    assert (await llm_loop.review_queue(user="carol")).total == 1


async def test_clear_cases_never_reach_the_model(llm_loop: Loop, scripted_openai: ScriptedOpenAI) -> None:
    await llm_loop.save("Kettle A boils off 2 L/hr.", user="dave")
    await llm_loop.save("Kettle B boils off 3 L/hr.", user="dave")  # another instance: create, no link
    await llm_loop.save("Kettle A boils off 2.5 L/hr.", user="dave")  # a changed value: new version
    assert scripted_openai.chat_requests == []
