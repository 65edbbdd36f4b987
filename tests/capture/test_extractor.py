"""The LLM extractor against a real (scripted) OpenAI-compatible server over HTTP: one call, strict parsing."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from learnloop.capture.artifacts import ObserveContext
from learnloop.capture.extractor import LLMExtractor
from learnloop.llms.openai import OpenAIChat
from learnloop.models import LearningType
from tests.support.scripted_openai import Reply, ScriptedOpenAI

CONTEXT = ObserveContext(
    recalled=["User brews 20 L batches", "User prefers mashing at 66 C"],
    vocabulary_categories=["equipment", "technique", "recipe", "ingredient", "correction"],
    category_descriptions={"equipment": "Boil-off rates, dead space, mash tun efficiency"},
)
USER = "The boil-off was way less than you predicted, it's a Gen 1 Grainfather. About 3.5 L/hr."
ASSISTANT = "I planned for a boil-off rate of 4 L/hr."
GOOD = {
    "text": "Grainfather Gen 1 boil-off rate is ~3.5 L/hr, lower than the typical 4 L/hr",
    "type": "correction",
    "category": "equipment",
    "topic": "boil-off rate",
    "tags": ["grainfather", "boil-off"],
    "confidence": 0.9,
    "evidence": "it's a Gen 1 Grainfather. About 3.5 L/hr",
}


@pytest.fixture
async def extractor(scripted_openai: ScriptedOpenAI) -> AsyncIterator[LLMExtractor]:
    # One attempt: each extract() must be exactly one HTTP request, also when the server fails.
    chat = OpenAIChat("gpt-test", base_url=scripted_openai.base_url, api_key="sk-test", max_attempts=1)
    yield LLMExtractor(chat, max_items=3)
    await chat.aclose()


def prompt_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in request["messages"])


async def test_valid_json_becomes_artifacts(scripted_openai: ScriptedOpenAI, extractor: LLMExtractor) -> None:
    second = {"text": "User brews on a Gen 1 Grainfather", "type": "Fact", "category": "kettles", "evidence": ""}
    scripted_openai.reply(Reply.json({"learnings": [GOOD, second]}))
    artifacts = await extractor.extract(USER, ASSISTANT, context=CONTEXT)

    assert [(a.text, a.type, a.category) for a in artifacts] == [
        (GOOD["text"], LearningType.CORRECTION, "equipment"),
        ("User brews on a Gen 1 Grainfather", LearningType.FACT, None),  # unknown category dropped
    ]
    assert artifacts[0].rule == "llm" and artifacts[0].confidence == 0.9 and artifacts[0].tags == GOOD["tags"]
    assert artifacts[0].evidence == GOOD["evidence"]

    (request,) = scripted_openai.chat_requests
    assert request["response_format"] == {"type": "json_object"}
    prompt = prompt_text(request)
    for name in CONTEXT.vocabulary_categories:
        assert f"- {name}" in prompt
    assert "Boil-off rates, dead space" in prompt
    for recalled in CONTEXT.recalled:
        assert f"- {recalled}" in prompt
    assert USER in prompt and ASSISTANT in prompt
    assert "at most 3 learnings" in prompt


async def test_no_learnings_is_an_empty_list(scripted_openai: ScriptedOpenAI, extractor: LLMExtractor) -> None:
    scripted_openai.reply(Reply.json({"learnings": []}))
    assert await extractor.extract("Thanks, that helps!", "You're welcome.", context=CONTEXT) == []
    assert len(scripted_openai.chat_requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        Reply.text("Sure! Here are the learnings: boil-off is 3.5 L/hr"),
        Reply.text('{"learnings": [{"text": "unterminated'),
        Reply.json(["not", "an", "object"]),
        Reply.json({"memories": [GOOD]}),
        Reply.json({"learnings": "Grainfather boil-off is 3.5 L/hr"}),
    ],
    ids=["prose", "truncated", "array", "wrong-key", "not-a-list"],
)
async def test_malformed_output_yields_nothing(
    scripted_openai: ScriptedOpenAI, extractor: LLMExtractor, reply: Reply, caplog: pytest.LogCaptureFixture
) -> None:
    scripted_openai.reply(reply)
    with caplog.at_level(logging.WARNING, logger="learnloop.capture.extractor"):
        assert await extractor.extract(USER, ASSISTANT, context=CONTEXT) == []
    assert len(scripted_openai.chat_requests) == 1
    assert any("learning extraction" in r.message for r in caplog.records)


@pytest.mark.parametrize(
    "reply", [Reply.error(500, "upstream exploded"), Reply.error(401, "bad key"), Reply.hang_up()], ids=str
)
async def test_server_failure_yields_nothing(
    scripted_openai: ScriptedOpenAI, extractor: LLMExtractor, reply: Reply, caplog: pytest.LogCaptureFixture
) -> None:
    scripted_openai.reply(reply)
    with caplog.at_level(logging.WARNING, logger="learnloop.capture.extractor"):
        assert await extractor.extract(USER, ASSISTANT, context=CONTEXT) == []
    assert len(scripted_openai.chat_requests) == 1
    assert any("LLMError" in r.message for r in caplog.records)


async def test_invalid_items_are_dropped_and_valid_ones_kept(
    scripted_openai: ScriptedOpenAI, extractor: LLMExtractor
) -> None:
    bad = [
        {"text": "Boil-off is low", "type": "trivia"},  # unknown type
        {"type": "fact"},  # no text
        {"text": "short", "type": "fact"},  # too short to be a statement
        {"text": "User's kettle is a Grainfather Gen 1", "type": "fact", "confidence": 7},  # out of range
    ]
    scripted_openai.reply(Reply.json({"learnings": [*bad, GOOD]}))
    artifacts = await extractor.extract(USER, ASSISTANT, context=CONTEXT)
    assert [a.text for a in artifacts] == [GOOD["text"]]


async def test_recalled_and_assistant_content_is_not_accepted(
    scripted_openai: ScriptedOpenAI, extractor: LLMExtractor
) -> None:
    from_recall = {"text": "User prefers mashing at 66 C", "type": "preference", "evidence": ""}
    from_assistant = {"text": "Boil-off is usually 4 L/hr", "type": "fact", "evidence": "planned for a boil-off rate"}
    scripted_openai.reply(Reply.json({"learnings": [from_recall, from_assistant, GOOD]}))
    artifacts = await extractor.extract(USER, ASSISTANT, context=CONTEXT)
    assert [a.text for a in artifacts] == [GOOD["text"]]


async def test_at_most_max_items(scripted_openai: ScriptedOpenAI, extractor: LLMExtractor) -> None:
    items = [dict(GOOD, text=f"Grainfather Gen 1 boil-off fact number {n} is 3.5 L/hr") for n in range(6)]
    scripted_openai.reply(Reply.json({"learnings": items}))
    assert len(await extractor.extract(USER, ASSISTANT, context=CONTEXT)) == 3


async def test_fenced_json_is_accepted(scripted_openai: ScriptedOpenAI, extractor: LLMExtractor) -> None:
    scripted_openai.reply(Reply.text("```json\n" + json.dumps({"learnings": [GOOD]}) + "\n```"))
    assert len(await extractor.extract(USER, ASSISTANT, context=CONTEXT)) == 1


async def test_recalled_block_is_stripped_and_empty_turns_cost_no_call(
    scripted_openai: ScriptedOpenAI, extractor: LLMExtractor
) -> None:
    block = "<learning_memories>\n- [verified/fact] User brews 20 L batches\n</learning_memories>\n"
    assert await extractor.extract(block, ASSISTANT, context=CONTEXT) == []
    assert await extractor.extract("   ", ASSISTANT, context=CONTEXT) == []
    assert scripted_openai.chat_requests == []

    scripted_openai.reply(Reply.json({"learnings": []}))
    await extractor.extract(block + USER, block + ASSISTANT, context=CONTEXT)
    (request,) = scripted_openai.chat_requests
    assert "<learning_memories>" not in prompt_text(request)
