"""Token budgets (seed 001 §8.9): a turn's context within 2,000 tokens counted by a pluggable counter (by default
the local embedding model's bundled tokenizer); `retrieve_context` keeps seed 004's 1,500 characters."""

from __future__ import annotations

from collections.abc import Callable

import learnloop
from learnloop.prompting import Section, render_block
from learnloop.tokens import BundledTokenCounter, CharacterEstimate, default_counter
from learnloop.turns import TurnConfig

FACTS = [
    f"Store {n} reports revenue in {city} with a fiscal month that closes on day {n % 27 + 1}, "
    f"and its regional manager wants the revenue report split by {split} before the weekly review meeting."
    for n, (city, split) in enumerate(
        (c, s)
        for c in ("Lisbon", "Oslo", "Quito", "Perth", "Accra", "Hanoi", "Lima", "Riga")
        for s in ("channel", "product line", "country", "payment method")
    )
]


class WordCounter:
    """A counter an app could give: one token per word."""

    def count(self, text: str) -> int:
        return len(text.split())


def test_the_bundled_counter_adds_up_line_by_line() -> None:
    counter = BundledTokenCounter()
    lines = ["Favourite metrics: revenue, orders", "Preferred time range: last_month", "naïve café — 東京"]
    assert sum(counter.count(line) for line in lines) == counter.count("\n".join(lines))
    assert counter.count("") == 0 and default_counter() is default_counter()
    assert CharacterEstimate().count("abcdefgh") == 2


def test_a_token_budget_is_counted_not_estimated() -> None:
    section = Section("Memories:", [f"fact number {i} " + "word " * 30 for i in range(40)])
    counter = BundledTokenCounter()
    block = render_block([section], max_chars=1_000_000, max_tokens=500, counter=counter)
    assert block.tokens == counter.count(block.text) <= 500
    assert block.tokens > 400  # filled, not cut at an estimate
    words = render_block([section], max_chars=1_000_000, max_tokens=200, counter=WordCounter())
    assert WordCounter().count(words.text) <= 200 < len(words.text) // 4


async def test_a_turn_fills_two_thousand_tokens_and_retrieve_context_keeps_1500_characters(
    open_loop: Callable[..., learnloop.Loop],
) -> None:
    loop = open_loop("tokens.db")
    loop.turns.configure(TurnConfig(agent=False))
    try:
        for fact in FACTS:
            await loop.save(fact, user="alice", status="verified")
        query = "how should the revenue report be split for the regional managers?"
        limits = learnloop.Limits(top_k=40, max_items=40)
        retrieved = await loop.retrieve_context("alice", query, limits=limits)
        assert 0 < len(retrieved.block) <= 1500
        many = learnloop.Limits(top_k=40, max_items=40, max_chars=100_000)
        async with loop.turn("alice", query, session="s", limits=many) as turn:
            tokens = default_counter().count(turn.context)
            assert tokens <= 2_000 and len(turn.context) > 1_500
        loop.turns.configure(TurnConfig(agent=False, max_tokens=300, token_counter=WordCounter()))
        async with loop.turn("alice", query, session="s2", limits=many) as t2:
            assert 200 < WordCounter().count(t2.context) <= 300
    finally:
        await loop.aclose()


async def test_limits_given_for_counts_keep_the_token_budget(open_loop: Callable[..., learnloop.Loop]) -> None:
    loop = open_loop("counts.db")
    loop.turns.configure(TurnConfig(agent=False))
    try:
        for fact in FACTS:
            await loop.save(fact, user="alice", status="verified")
        query = "how should the revenue report be split for the regional managers?"
        async with loop.turn("alice", query, session="s", limits=learnloop.Limits(top_k=40, max_items=40)) as turn:
            assert len(turn.context) > 1_500 and default_counter().count(turn.context) <= 2_000
        capped = learnloop.Limits(top_k=40, max_items=40, max_chars=800)
        async with loop.turn("alice", query, session="s2", limits=capped) as turn:
            assert len(turn.context) <= 800  # a character cap the caller set still holds
    finally:
        await loop.aclose()
