"""Seed 001 §6.1's reading of one message: coarse and fine intent, metrics, time range, complexity — by rules a
vocabulary gives (the default: shop analytics)."""

from __future__ import annotations

from learnloop.profile import DEFAULT_RULES, IntentRules


def test_the_default_rules_read_the_seed_s_examples() -> None:
    top = DEFAULT_RULES.analyse("top products by revenue in the last 30 days")
    assert (top.coarse, top.fine) == ("products", "products_ranking_revenue_last_30_days")
    assert top.metrics == ("revenue",) and top.time_range == "last_30_days" and top.complexity == "simple"
    plain = DEFAULT_RULES.analyse("What was our revenue last month?")
    assert (plain.coarse, plain.fine, plain.time_range) == ("revenue", "revenue_last_month", "last_month")
    assert DEFAULT_RULES.analyse("hello there").coarse == "other"


def test_complexity_counts_the_seed_s_signals() -> None:
    # Several metrics and "and": moderate; add a comparison: complex (seed 001 §6.1's three-or-more signals).
    assert DEFAULT_RULES.analyse("revenue and orders yesterday").complexity == "moderate"
    compared = DEFAULT_RULES.analyse("compare revenue and orders this month versus last month")
    assert compared.coarse == "comparison" and compared.complexity == "complex"
    long = "show me " + "the revenue " * 11 + "for last week"
    assert DEFAULT_RULES.analyse(long).complexity == "moderate"  # only its length counts


def test_an_app_s_vocabulary_is_configuration() -> None:
    brewing = IntentRules(
        query_types={"recipe": ("recipe", "brew"), "equipment": ("kettle", "fermenter")},
        metrics={"abv": ("abv", "alcohol"), "ibu": ("ibu", "bitterness")},
        time_ranges=((r"\blast batch\b", "last_batch"),),
    )
    read = brewing.analyse("what was the ABV of the last batch of this recipe?")
    assert (read.coarse, read.fine, read.metrics) == ("recipe", "recipe_abv_last_batch", ("abv",))
