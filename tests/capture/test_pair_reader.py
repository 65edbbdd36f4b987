"""The learned pair reader: it reads again only the pairs the rules left as `create` for want of evidence, turns
them into one learning or a new version when sure, and never loses a text doing so."""

from __future__ import annotations

from dataclasses import replace

import learnloop
from learnloop.capture.dedupe import DedupeAction, DedupePolicy, judge, judge_by_rules
from learnloop.capture.pair_reader import CLASSES, load_pair_reader, open_to_reading, with_pair_reader
from learnloop.embedders.base import Embedder
from learnloop.models import Status

from .test_dedupe import learning

MINILM = "local:all-MiniLM-L6-v2"


def reader_policy(model: str = MINILM) -> DedupePolicy:
    return with_pair_reader(DedupePolicy.for_model(model))


async def similarity(embedder: Embedder, new: str, old: str) -> float:
    vectors = await embedder.embed([new, old])
    return float(vectors[0] @ vectors[1])


def test_both_profiles_ship_a_reader_and_other_embedders_get_none() -> None:
    for model in (MINILM, "local:minilm-static-v1"):
        reader = load_pair_reader(model)
        assert reader is not None
        assert reader.cue.shape[1] == reader.words.shape[1] == len(CLASSES)
        assert 0.5 < reader.update_threshold <= 1 and 0.5 < reader.same_threshold <= 1
    assert load_pair_reader("openai:text-embedding-3-small") is None
    # An uncalibrated embedder keeps the conservative, words-only policy: no cosine, no reader.
    assert with_pair_reader(DedupePolicy.conservative("openai:text-embedding-3-small")).reader is None


async def test_a_paraphrase_the_rules_leave_apart_becomes_one_learning_with_both_texts(embedder: Embedder) -> None:
    old, new = "User doesn't eat pork at all.", "User avoids all pork products."
    sim = await similarity(embedder, new, old)
    assert judge_by_rules(new, [], learning(old), sim, reader_policy()).action is DedupeAction.CREATE
    decision = judge(new, [], learning(old), sim, reader_policy())
    assert decision.action is DedupeAction.MERGE
    assert decision.text is not None and old in decision.text and new in decision.text
    assert "pair reader" in decision.reason


async def test_names_further_in_are_values_the_reader_weighs(embedder: Embedder) -> None:
    old, new = "User has a flat white every morning.", "User has a black Americano every morning."
    sim = await similarity(embedder, new, old)
    rules = judge_by_rules(new, [], learning(old), sim, reader_policy())
    assert rules.action is DedupeAction.CREATE
    assert open_to_reading(new, old, rules)


async def test_a_changed_value_said_without_a_change_word_supersedes(embedder: Embedder) -> None:
    old, new = "User commutes to work by car.", "User cycles to work now."
    sim = await similarity(embedder, new, old)
    assert judge(new, [], learning(old), sim, reader_policy()).action is DedupeAction.NEW_VERSION


async def test_what_the_rules_settled_is_never_read_again(embedder: Embedder) -> None:
    cases = [
        # a name only one text has
        ("Ana Costa lives in Lisbon.", "Ben Okafor lives in Lisbon.", [], []),
        # a name that opens the text: another person's car, however alike the rest
        ("Aisha Nowak drives a Toyota Corolla.", "Helga Nowak drives a Honda Civic.", [], []),
        ("Aisha Nowak drives a Toyota Corolla.", "Aisha Kowalski drives a Toyota Corolla.", [], []),
        # another scope
        ("Backups are kept for 30 days.", "Backups are kept for 30 days.", ["production"], ["staging"]),
    ]
    for new, old, new_tags, old_tags in cases:
        sim = await similarity(embedder, new, old)
        decision = judge(new, new_tags, learning(old, tags=old_tags), sim, reader_policy())
        assert decision.action is DedupeAction.CREATE, (new, old, decision.reason)
        assert "pair reader" not in decision.reason


async def test_a_merge_over_the_text_limit_keeps_both_learnings(embedder: Embedder) -> None:
    old, new = "User doesn't eat pork at all.", "User avoids all pork products."
    sim = await similarity(embedder, new, old)
    tight = replace(reader_policy(), max_merged_chars=40)
    assert judge(new, [], learning(old), sim, tight).action is DedupeAction.CREATE


async def test_the_engine_reads_pairs_again_through_save(loop: learnloop.Loop) -> None:
    assert loop.engine.dedupe_policy.reader is not None
    await loop.save("The office internet line is 1 Gbps.", user="u1", status="verified")
    saved = await loop.save("The office has gigabit internet.", user="u1", status="verified")
    assert saved.action.value == "merged", saved.reason
    [live] = [x for x in (await loop.list(user="u1", owner="u1")).items if x.status is not Status.DEPRECATED]
    assert "1 Gbps" in live.text and "gigabit" in live.text


async def test_a_merged_learning_of_several_claims_is_not_read_against_one_more(embedder: Embedder) -> None:
    old = "User loves fantasy. User loves sinking into different magical worlds"  # as observe() joins them
    new = "User loves traveling"
    sim = await similarity(embedder, new, old)
    decision = judge(new, [], learning(old), sim, reader_policy())
    assert decision.action is DedupeAction.CREATE and "pair reader" not in decision.reason
