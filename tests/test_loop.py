"""The SDK end to end on a real SQLite file with the real local embedding model."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

import learnloop
from learnloop import (
    Filters,
    InvalidCategory,
    InvalidTransition,
    LifecyclePolicy,
    Limits,
    Loop,
    NotFound,
    Status,
)
from learnloop.prompting import MEMORY_NOTICE

BOIL = "Grainfather Gen 1 boil-off rate is ~3.5 L/hr, lower than the typical 4-5 L/hr assumption"
# Well above the floor at which a shown learning counts as used (0.42): near it, int8 kernels of other CPUs decide.
QUESTION = "How much water boils off per hour on the Grainfather?"


async def test_saved_learning_comes_back_as_a_seed_004_block(loop: Loop) -> None:
    saved = await loop.save(BOIL, user="alice", category="equipment", status="verified")
    assert saved.action == "created" and saved.learning is not None
    result = await loop.retrieve_context("alice", QUESTION)
    assert result.block.startswith(f"<learning_memories>\n{MEMORY_NOTICE}\nRelevant memories (from your history):\n")
    assert f'- [verified/equipment] "{BOIL}"' in result.block
    assert result.block.endswith("</learning_memories>")
    [item] = result.items
    assert item.learning.id == saved.learning.id
    assert item.vector_similarity is not None and item.vector_similarity > 0.3
    assert "semantic match" in item.why
    again = await loop.get(saved.learning.id)
    assert again.hits == 1 and again.streak == 1 and again.last_retrieved_at is not None


async def test_unrelated_questions_recall_nothing(loop: Loop) -> None:
    await loop.save(BOIL, user="alice", category="equipment")
    result = await loop.retrieve_context("alice", "What is the capital of Mongolia?")
    assert result.items == [] and result.block == ""


async def test_users_do_not_see_each_other_but_see_global_learnings(loop: Loop) -> None:
    await loop.save(BOIL, user="alice", category="equipment")
    await loop.save("Boil-off on the shared club kettle is 5 L/hr", user=None, category="equipment")
    bob = await loop.retrieve_context("bob", QUESTION)
    assert [i.learning.user for i in bob.items] == [None]
    alice = await loop.retrieve_context("alice", QUESTION)
    assert {i.learning.user for i in alice.items} == {"alice", None}


async def test_category_must_be_in_the_vocabulary(loop: Loop) -> None:
    with pytest.raises(InvalidCategory) as caught:
        await loop.save(BOIL, user="alice", category="gear")
    assert caught.value.details["allowed"] == ["equipment", "technique", "recipe", "ingredient", "correction"]
    with pytest.raises(InvalidCategory):
        await loop.retrieve_context("alice", QUESTION, categories=["gear"])


async def test_filters_apply_before_ranking(loop: Loop) -> None:
    await loop.save(BOIL, user="alice", category="equipment")
    await loop.save("US-05 attenuates to about 82% in this system", user="alice", category="ingredient")
    only = await loop.retrieve_context("alice", "boil-off and US-05 attenuation", categories=["ingredient"])
    assert [i.learning.category for i in only.items] == ["ingredient"]


async def test_verified_learnings_are_listed_before_candidates(loop: Loop) -> None:
    await loop.save("Boil-off on this kettle is about 3.5 litres per hour", user="alice", category="equipment")
    await loop.save(BOIL, user="alice", category="equipment", status="verified")
    result = await loop.retrieve_context("alice", QUESTION)
    assert [i.learning.status for i in result.items] == [Status.VERIFIED, Status.CANDIDATE]


async def test_deprecated_learnings_are_never_returned(loop: Loop) -> None:
    saved = await loop.save(BOIL, user="alice", category="equipment", status="verified")
    assert saved.learning is not None
    await loop.deprecate(saved.learning.id, "kettle replaced")
    assert (await loop.retrieve_context("alice", QUESTION)).items == []
    with pytest.raises(ValueError, match="candidate, verified"):
        Filters(statuses=[Status.DEPRECATED])


async def test_streak_of_three_promotes_with_lowered_confidence(loop: Loop) -> None:
    saved = await loop.save(BOIL, user="alice", category="equipment", confidence=0.8)
    assert saved.learning is not None and saved.learning.status is Status.CANDIDATE
    for _ in range(3):
        await loop.retrieve_context("alice", QUESTION)
    learning = await loop.get(saved.learning.id)
    assert learning.status is Status.VERIFIED
    assert learning.confidence == pytest.approx(LifecyclePolicy().auto_promotion_confidence)
    history = await loop.history(learning.id)
    assert [e.action for e in history][-1] == "promoted"
    assert history[-1].actor == "system:auto-promote" and "3 times in a row" in (history[-1].reason or "")


async def test_five_hits_promote_when_streaks_do_not(open_loop: Callable[..., Loop]) -> None:
    loop = open_loop(policy=LifecyclePolicy(promote_on_streak=100, promote_on_hits=5))
    try:
        saved = await loop.save(BOIL, user="alice", category="equipment")
        assert saved.learning is not None
        for expected in [Status.CANDIDATE] * 4 + [Status.VERIFIED]:
            await loop.retrieve_context("alice", QUESTION)
            assert (await loop.get(saved.learning.id)).status is expected
    finally:
        await loop.aclose()


async def test_negative_feedback_blocks_promotion_demotes_and_deprecates(loop: Loop) -> None:
    saved = await loop.save(BOIL, user="alice", category="equipment", status="verified", confidence=0.9)
    assert saved.learning is not None
    learning_id = saved.learning.id
    [demoted] = await loop.report_failure([learning_id], user="alice", reason="user said it was wrong")
    assert demoted.status is Status.CANDIDATE and demoted.failures == 1 and demoted.streak == 0
    for _ in range(4):
        await loop.retrieve_context("alice", QUESTION)
    assert (await loop.get(learning_id)).status is Status.CANDIDATE  # failures block evidence promotion
    [deprecated] = await loop.report_failure([learning_id], user="alice", reason="wrong again")
    assert deprecated.status is Status.DEPRECATED
    with pytest.raises(InvalidTransition):
        await loop.restore(learning_id, actor="system:auto")
    restored = await loop.restore(learning_id, actor="person:admin")
    assert restored.status is Status.CANDIDATE


async def test_promote_and_promote_last_candidate(loop: Loop) -> None:
    first = await loop.save("Mash at 66 C for a drier finish", user="alice", category="technique")
    second = await loop.save("Sparge with 76 C water", user="alice", category="technique")
    assert first.learning is not None and second.learning is not None
    promoted = await loop.promote_last_candidate("alice")
    assert promoted is not None and promoted.id == second.learning.id and promoted.status is Status.VERIFIED
    assert promoted.confidence >= LifecyclePolicy().confirmation_confidence
    with pytest.raises(InvalidTransition):
        await loop.promote(second.learning.id)
    assert (await loop.promote(first.learning.id)).status is Status.VERIFIED
    assert await loop.promote_last_candidate("alice") is None


async def test_update_reembeds_and_bumps_the_version(loop: Loop) -> None:
    saved = await loop.save("US-05 attenuates to about 75%", user="alice", category="ingredient")
    assert saved.learning is not None
    updated = await loop.update(saved.learning.id, text=BOIL, category="equipment", tags=["Boil", "kettle"])
    assert updated.version == 2 and updated.category == "equipment" and updated.tags == ["boil", "kettle"]
    result = await loop.retrieve_context("alice", QUESTION)
    assert [i.learning.id for i in result.items] == [updated.id]
    assert [e.action for e in await loop.history(updated.id)] == ["created", "edited"]


async def test_delete_removes_it_from_recall_and_listing_but_keeps_history(loop: Loop) -> None:
    saved = await loop.save(BOIL, user="alice", category="equipment")
    assert saved.learning is not None
    await loop.delete(saved.learning.id)
    assert (await loop.retrieve_context("alice", QUESTION)).items == []
    assert (await loop.list(user="alice")).total == 0
    with pytest.raises(NotFound):
        await loop.get(saved.learning.id)
    events = await loop.events(user="alice")
    assert [e.action for e in events if e.learning_id == saved.learning.id] == ["created", "deleted"]


async def test_admin_list_filters_and_recent(loop: Loop) -> None:
    for i in range(5):
        await loop.save(f"Batch {i} fermented at {18 + i} C", user="alice", category="recipe")
    await loop.save(BOIL, user="bob", category="equipment")
    page = await loop.list(category="recipe", limit=2)
    assert page.total == 5 and len(page.items) == 2 and page.items[0].text.startswith("Batch 4")
    assert (await loop.list(owner="bob")).items[0].text == BOIL
    assert [learning.text[:7] for learning in await loop.list_recent("alice", limit=2)] == [
        "Batch 4",
        "Batch 3",
    ]


async def test_purge_deprecated_older_than(loop: Loop) -> None:
    saved = await loop.save(BOIL, user="alice", category="equipment")
    assert saved.learning is not None
    await loop.deprecate(saved.learning.id, "replaced")
    assert await loop.purge_deprecated(timedelta(days=30)) == []
    assert await loop.purge_deprecated(timedelta(seconds=-1)) == [saved.learning.id]


KETTLES = [
    "Grainfather G30",
    "Anvil Foundry",
    "Brewzilla 35L",
    "Robobrew",
    "Spike kettle",
    "Mash & Boil",
    "BIAB kettle",
    "club kettle",
    "Ss Brewtech kettle",
    "Klarstein kettle",
]


async def test_limits_and_token_budget(loop: Loop) -> None:
    for i, kettle in enumerate(KETTLES):
        await loop.save(f"The {kettle} boils off about {3 + i / 10:.1f} L per hour", user="alice", category="equipment")
    default = await loop.retrieve_context("alice", QUESTION)
    assert len(default.items) == 6 and len(default.block) <= 1500
    tight = await loop.retrieve_context("alice", QUESTION, limits=Limits(max_tokens=40))
    assert 1 <= len(tight.items) < 6 and tight.tokens <= 40


async def test_query_vector_skips_embedding_and_record_false_counts_nothing(loop: Loop) -> None:
    saved = await loop.save(BOIL, user="alice", category="equipment")
    assert saved.learning is not None
    vector = (await loop.engine.embedder.embed([QUESTION], purpose="query"))[0]
    result = await loop.retrieve_context("alice", QUESTION, query_vector=vector, record=False)
    assert [i.learning.id for i in result.items] == [saved.learning.id]
    assert (await loop.get(saved.learning.id)).hits == 0
    with pytest.raises(learnloop.ValidationError):
        await loop.retrieve_context("alice", QUESTION, query_vector=np.zeros(3, dtype=np.float32))
    with pytest.raises(learnloop.ValidationError):
        await loop.retrieve_context("alice", "   ")


async def test_forget_leaves_no_trace_of_the_user(open_loop: Callable[..., Loop], tmp_path: Path) -> None:
    loop = open_loop("forget.db")
    secret_word = "zanzibarquux"
    await loop.save(f"The {secret_word} fermenter holds 30 litres", user="mallory", category="equipment")
    await loop.save("Mallory likes Belgian yeast", user="mallory", category="ingredient")
    shared = await loop.save(
        "Club kettle boil-off is 5 L/hr",
        user=None,
        category="equipment",
        source=learnloop.Source(author="mallory", session="sess-mallory"),
    )
    await loop.save(BOIL, user="alice", category="equipment")
    await loop.retrieve_context("mallory", "fermenter size")
    # Her channels: one attached to her id, one with a user of its own (and a learning) merged in by a link code,
    # a code she issued since, and a wrong code she tried.
    await loop.identities.attach("telegram", "4242", "mallory", username="mallory_tg")
    whatsapp = await loop.identities.resolve("whatsapp", "+15550001111", username="mallory_wa")
    await loop.save(f"User's {secret_word} kegerator holds 2 kegs", user=whatsapp.user, category="equipment")
    code = await loop.identities.issue_link_code("telegram", "4242")
    await loop.identities.redeem_link_code("whatsapp", "+15550001111", code.code)
    await loop.identities.issue_link_code("telegram", "4242")
    with pytest.raises(learnloop.LinkCodeInvalid):
        await loop.identities.redeem_link_code("whatsapp", "+15550001111", "WRONG999")
    removed = await loop.forget("mallory")
    assert removed["learnings"] == 4 and removed["anonymised"] == 1
    assert removed["channel_identities"] == 2 and removed["link_codes"] == 1 and removed["link_attempts"] == 1
    assert removed["canonical_users"] == 2  # hers and the one merged into it
    after = await loop.retrieve_context("mallory", "fermenter size", record=False)
    assert all(i.learning.user is None for i in after.items)
    assert shared.learning is not None
    kept = await loop.get(shared.learning.id)
    assert kept.source.author is None and kept.source.session is None
    await loop.aclose()

    conn = sqlite3.connect(tmp_path / "forget.db")
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        for row in conn.execute(f"SELECT * FROM {table}"):
            text = " ".join(str(v) for v in row if not isinstance(v, bytes))
            assert "mallory" not in text.lower(), f"{table} still mentions the user: {text[:200]}"
            assert whatsapp.user not in text, f"{table} still mentions the user merged into hers"
            assert secret_word not in text.lower(), f"{table} still holds the user's text"
    conn.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab(learnings_fts, 'row')")
    terms = {r[0] for r in conn.execute("SELECT term FROM vocab")}
    assert secret_word not in terms and "mallori" not in terms
    conn.close()
    raw = (tmp_path / "forget.db").read_bytes()
    assert secret_word.encode() not in raw


async def test_export_then_import_into_a_fresh_file(open_loop: Callable[..., Loop], tmp_path: Path) -> None:
    source = open_loop("source.db")
    a = await source.save(BOIL, user="alice", category="equipment", status="verified")
    await source.save("Mash at 66 C", user="bob", category="technique")
    assert a.learning is not None
    await source.deprecate(a.learning.id, "old kettle")
    count = await source.export_to(tmp_path / "dump.jsonl")
    await source.aclose()
    assert count == 2  # no vocabulary stored in this tenant: learnings only

    target = open_loop("target.db")
    try:
        report = await target.import_jsonl(tmp_path / "dump.jsonl")
        assert (report.imported, report.reembedded) == (2, 0)
        texts = {(learning.user, learning.text, learning.status) for learning in (await target.list()).items}
        assert texts == {("alice", BOIL, Status.DEPRECATED), ("bob", "Mash at 66 C", Status.CANDIDATE)}
        again = await target.import_jsonl(tmp_path / "dump.jsonl")
        assert (again.imported, again.skipped_existing) == (0, 2)
        assert [i.learning.text for i in (await target.retrieve_context("bob", "mash temperature")).items] == [
            "Mash at 66 C"
        ]
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"text": "Carol ferments at 19 C", "user": "carol"}\n{"user": "carol"}\n')
        report = await target.import_jsonl(bad)
        assert [r.line for r in report.rejected_lines] == [2] and "text" in report.rejected_lines[0].reason
        assert (await target.list(owner="carol")).total == 1
    finally:
        await target.aclose()


def test_sync_wrapper(open_loop: Callable[..., Loop]) -> None:
    loop = open_loop("sync.db").sync
    saved = loop.save(BOIL, user="alice", category="equipment")
    assert saved.learning is not None
    assert loop.retrieve_context("alice", QUESTION).items[0].learning.id == saved.learning.id
    assert len(list(loop.export_jsonl())) == 1
    loop.close()


async def test_vocabulary_is_stored_per_tenant(loop: Loop) -> None:
    await loop.set_vocabulary({"sort_keys": "Which sort key an API wants", "errors": "Errors and their fixes"})
    assert (await loop.vocabulary()).names == ["sort_keys", "errors"]
    other = loop.for_tenant("acme")
    assert (await other.vocabulary()).names[0] == "equipment"
    await loop.save("REVENUE is not a valid sort key; use BEST_SELLING", user="u", category="sort_keys")
    with pytest.raises(InvalidCategory):
        await other.save("x y z", user="u", category="sort_keys")


async def test_a_user_forgotten_by_another_process_disappears_from_this_ones_cache(
    open_loop: Callable[..., Loop],
) -> None:
    first, second = open_loop("shared.db"), open_loop("shared.db")
    try:
        await first.save("The zanzibar fermenter holds 30 litres", user="mallory", category="equipment")
        assert (await second.retrieve_context("mallory", "fermenter size", record=False)).items
        await first.forget("mallory")
        assert (await second.retrieve_context("mallory", "fermenter size", record=False)).items == []
        partitions = second.engine.store._partitions._partitions  # type: ignore[attr-defined]
        assert partitions[("default", "mallory")].n == 0  # reloaded from the file: nothing of theirs left
    finally:
        await first.aclose()
        await second.aclose()
