"""Synthetic but realistic learnings for load benchmarks: brewing, analytics, coding and preferences.

Deterministic for a seed. Texts vary in subject, numbers and wording so that embeddings spread out the way
real memories do (uniform random vectors would make ANN figures meaningless).
"""

from __future__ import annotations

import random

EQUIPMENT = [
    "Grainfather G30",
    "Grainfather Gen 1",
    "Anvil Foundry",
    "Brewzilla 35L",
    "Mash & Boil",
    "Robobrew",
    "BIAB kettle",
    "Spike kettle",
    "SS Brewtech fermenter",
    "Fermzilla",
    "keg fridge",
    "plate chiller",
]
INGREDIENTS = [
    "US-05",
    "S-04",
    "WLP001",
    "Kveik Voss",
    "Nottingham",
    "Cascade",
    "Citra",
    "Mosaic",
    "Saaz",
    "Maris Otter",
    "Pilsner malt",
    "Crystal 60",
    "flaked oats",
    "Munich malt",
    "gypsum",
    "calcium chloride",
]
STYLES = [
    "pale ale",
    "IPA",
    "stout",
    "pilsner",
    "saison",
    "porter",
    "hefeweizen",
    "brown ale",
    "NEIPA",
    "lager",
]
METRICS = [
    "revenue",
    "orders",
    "refunds",
    "sessions",
    "conversion rate",
    "churn",
    "active users",
    "AOV",
    "signups",
    "tickets",
    "latency",
    "error rate",
]
DIMENSIONS = ["region", "channel", "SKU", "customer segment", "week", "store", "campaign", "device"]
SORT_KEYS = ["BEST_SELLING", "CREATED_AT", "UPDATED_AT", "PRICE", "TITLE", "INVENTORY_TOTAL"]
TOOLS = ["pytest", "ruff", "mypy", "uv", "poetry", "docker compose", "make", "pre-commit", "tox", "black"]
LANGS = ["Python", "TypeScript", "Go", "Rust", "SQL", "Bash"]
PEOPLE = ["the user", "their team", "the analyst", "the brewer", "the manager"]

TEMPLATES = [
    "{equipment} boil-off rate is about {n1}.{d} L/hr, lower than the typical {n2}-{n3} L/hr assumption",
    "{equipment} dead space is {n1}.{d} litres; add it to the mash water",
    "{equipment} mash efficiency is around {p}% with a fine crush",
    "{ingredient} attenuated to {p}% in this system, higher than the listed {p2}%",
    "{ingredient} gives a {flavor} character when used late in the boil",
    "User prefers {style} recipes with IBU around {n4} and mash at {t} C",
    "For {style} batches the user ferments at {t2} C for {n1} days before cold crash",
    "The {style} came out too {flavor}; reduce the {n5}-minute hop addition by {p3}%",
    "Measured OG for the {style} was 1.0{n6}, predicted was 1.0{n7}",
    "When asked about {metric}, group by {dimension} and show the last {days} days",
    "The {metric} dashboard should exclude test accounts and internal {dimension} values",
    "Sort products by {sort} rather than REVENUE when the API returns INVALID_SORT_KEY",
    "{metric} for {dimension} is reported in {currency}, not USD",
    "{person} wants {metric} broken down by {dimension} every {weekday}",
    "The {dimension} filter needs ISO dates; relative dates fail on the orders endpoint",
    "Use {tool} for {lang} projects; the user dislikes {tool2}",
    "In this repo run {tool} before committing; CI fails on {tool2} errors",
    "{person} prefers answers in metric units and short bullet lists",
    "{person} wants code examples in {lang} with type hints",
    "The {lang} service reads settings from environment variables prefixed APP_",
    "Retry the {metric} export with a page size of {n8} when it times out",
    "The {equipment} needs {n1}.{d} kW to reach a rolling boil in {n9} minutes",
    "Water for {style} uses {n10} ppm sulfate and {n11} ppm chloride",
    "{ingredient} from the {n12} harvest smelled grassy; use it only for bittering",
]
FLAVORS = ["piney", "citrus", "bitter", "malty", "dry", "sweet", "fruity", "earthy", "harsh", "thin"]
CURRENCIES = ["EUR", "GBP", "JPY", "CAD", "AUD"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]

QUESTIONS = [
    "How much water will boil off in a {n5} minute boil on the {equipment}?",
    "What attenuation should I expect from {ingredient}?",
    "Which mash temperature does the user like for a {style}?",
    "How should I break down {metric} for the weekly report?",
    "Which sort key works for the products API?",
    "What tooling does the user want for a {lang} project?",
    "What water profile for a {style}?",
    "Why was the last {style} too {flavor}?",
    "How long to ferment the {style}?",
    "What currency is {metric} reported in?",
]


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        equipment=rng.choice(EQUIPMENT),
        ingredient=rng.choice(INGREDIENTS),
        style=rng.choice(STYLES),
        metric=rng.choice(METRICS),
        dimension=rng.choice(DIMENSIONS),
        sort=rng.choice(SORT_KEYS),
        tool=rng.choice(TOOLS),
        tool2=rng.choice(TOOLS),
        lang=rng.choice(LANGS),
        person=rng.choice(PEOPLE),
        flavor=rng.choice(FLAVORS),
        currency=rng.choice(CURRENCIES),
        weekday=rng.choice(WEEKDAYS),
        n1=rng.randint(1, 9),
        n2=rng.randint(3, 5),
        n3=rng.randint(5, 7),
        n4=rng.randint(15, 90),
        n5=rng.choice([15, 30, 45, 60, 75, 90]),
        n6=rng.randint(30, 80),
        n7=rng.randint(30, 80),
        n8=rng.choice([50, 100, 250, 500]),
        n9=rng.randint(10, 60),
        n10=rng.randint(50, 350),
        n11=rng.randint(30, 200),
        n12=rng.randint(2015, 2025),
        d=rng.randint(0, 9),
        p=rng.randint(60, 90),
        p2=rng.randint(65, 80),
        p3=rng.randint(10, 40),
        t=rng.randint(62, 70),
        t2=rng.randint(12, 22),
        days=rng.choice([7, 14, 28, 30, 90]),
    )


def learnings(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        text = _fill(TEMPLATES[rng.randrange(len(TEMPLATES))], rng)
        # A short id-free suffix now and then keeps near-identical fills distinct without junk tokens.
        if i % 3 == 0:
            text += rng.choice(["", " (confirmed twice)", " according to the last brew log", " per the Q3 review"])
        out.append(text)
    return out


def questions(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [_fill(QUESTIONS[rng.randrange(len(QUESTIONS))], rng) for _ in range(count)]
