"""Relevance: what fits nothing is not shown, and noise is never promoted by retrievals it did not serve."""

from __future__ import annotations

from learnloop import Loop, Status

BOIL = "Grainfather Gen 1 boil-off rate is ~3.5 L/hr"
MASH = "Mash at 65 C for a drier finish"
UNRELATED = [
    "which yeast do I use?",
    "how long should I cold crash the lager?",
    "what is my usual batch size?",
    "what's the capital of Peru?",
]


async def test_questions_nothing_answers_get_an_empty_block_and_promote_nothing(loop: Loop) -> None:
    for text in (BOIL, MASH):
        await loop.save(text, user="brewer", status="candidate")
    for _ in range(3):  # a streak of three or five hits would promote what was shown
        for question in UNRELATED:
            result = await loop.retrieve_context("brewer", question)
            assert all(not item.used for item in result.items), (question, [i.why for i in result.items])
    statuses = {x.text: x.status for x in (await loop.list(user="brewer", owner="brewer")).items}
    assert statuses == {BOIL: Status.CANDIDATE, MASH: Status.CANDIDATE}
    assert (await loop.retrieve_context("brewer", "what's the capital of Peru?")).block == ""


async def test_a_question_that_fits_is_answered_and_counts(loop: Loop) -> None:
    await loop.save(BOIL, user="brewer2", status="candidate")
    result = await loop.retrieve_context("brewer2", "How much water boils off per hour on my Grainfather?")
    assert [i.learning.text for i in result.items] == [BOIL] and result.items[0].used


async def test_a_name_memory_never_mentions_is_not_answered_by_someone_else(loop: Loop) -> None:
    await loop.save("Jon went hiking in the Alps with his sister last June.", user="friend", category="technique")
    await loop.save("Jon's favourite trail snack is dried mango.", user="friend", category="technique")
    assert (await loop.retrieve_context("friend", "When did Caroline go hiking?")).items == []
    found = await loop.retrieve_context("friend", "When did Jon go hiking?")
    assert found.items and "Alps" in found.items[0].learning.text


def test_the_names_a_question_asks_about() -> None:
    from learnloop.terms import mentions_any, query_names

    assert query_names("When did Caroline's sister visit Peru? I'm curious.") == {"caroline", "peru"}
    assert query_names("How do I clean a fermenter?") == frozenset()
    assert query_names("マークはいつ来ますか？") == frozenset()  # no case: no names
    assert mentions_any("Caroline: we went to Lima", frozenset({"caroline"}))
    assert not mentions_any("Anacaroline went", frozenset({"caroline"}))
