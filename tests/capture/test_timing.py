"""Time expressions resolved against fixed anchors (table-driven): each row is an expression and what it means
said on Monday 8 May 2023 (A), on leap day Thursday 29 February 2024 (B) and on Sunday 31 December 2023 (C).
A value is one day ("2023-05-07") or a range, end exclusive ("2023-05-01..2023-05-08")."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from learnloop import Loop
from learnloop.capture.timing import dated, momentary, resolve

ANCHORS = (
    datetime(2023, 5, 8, 14, 0, tzinfo=UTC),
    datetime(2024, 2, 29, 9, 30, tzinfo=UTC),
    datetime(2023, 12, 31, 23, 0, tzinfo=UTC),
)
YESTERDAY = ("2023-05-07", "2024-02-28", "2023-12-30")
TODAY = ("2023-05-08", "2024-02-29", "2023-12-31")
TOMORROW = ("2023-05-09", "2024-03-01", "2024-01-01")
BEFORE_YESTERDAY = ("2023-05-06", "2024-02-27", "2023-12-29")
TWO_DAYS_AGO = BEFORE_YESTERDAY
A_WEEK_AGO = ("2023-05-01", "2024-02-22", "2023-12-24")
TWO_WEEKS_AGO = ("2023-04-24", "2024-02-15", "2023-12-17")
A_YEAR_AGO = ("2022-05-08", "2023-02-28", "2022-12-31")
LAST_WEEK = ("2023-05-01..2023-05-08", "2024-02-19..2024-02-26", "2023-12-18..2023-12-25")
LAST_MONTH = ("2023-04-01..2023-05-01", "2024-01-01..2024-02-01", "2023-11-01..2023-12-01")
NEXT_MONTH = ("2023-06-01..2023-07-01", "2024-03-01..2024-04-01", "2024-01-01..2024-02-01")
LAST_YEAR = ("2022-01-01..2023-01-01", "2023-01-01..2024-01-01", "2022-01-01..2023-01-01")
LAST_MONDAY = ("2023-05-01", "2024-02-26", "2023-12-25")


def every(value: str) -> tuple[str, str, str]:
    return (value, value, value)


TABLE: list[tuple[str, tuple[str, str, str]]] = [
    # days, relative
    ("yesterday", YESTERDAY),
    ("today", TODAY),
    ("tonight", TODAY),
    ("this morning", TODAY),
    ("tomorrow", TOMORROW),
    ("the day before yesterday", BEFORE_YESTERDAY),
    ("the day after tomorrow", ("2023-05-10", "2024-03-02", "2024-01-02")),
    ("last night", YESTERDAY),
    ("two days ago", TWO_DAYS_AGO),
    ("3 days ago", ("2023-05-05", "2024-02-26", "2023-12-28")),
    ("a couple of days ago", TWO_DAYS_AGO),
    ("a few days ago", ("2023-05-05", "2024-02-26", "2023-12-28")),
    ("10 days ago", ("2023-04-28", "2024-02-19", "2023-12-21")),
    ("a week ago", A_WEEK_AGO),
    ("two weeks ago", TWO_WEEKS_AGO),
    ("a fortnight ago", TWO_WEEKS_AGO),
    ("a few weeks ago", ("2023-04-17", "2024-02-08", "2023-12-10")),
    ("a month ago", ("2023-04-08", "2024-01-29", "2023-11-30")),
    ("3 months ago", ("2023-02-08", "2023-11-29", "2023-09-30")),
    ("six months ago", ("2022-11-08", "2023-08-29", "2023-06-30")),
    ("a year ago", A_YEAR_AGO),
    ("two years ago", ("2021-05-08", "2022-02-28", "2021-12-31")),
    ("10 years ago", ("2013-05-08", "2014-02-28", "2013-12-31")),
    ("in 3 days", ("2023-05-11", "2024-03-03", "2024-01-03")),
    ("in two weeks", ("2023-05-22", "2024-03-14", "2024-01-14")),
    ("in 2 months", ("2023-07-08", "2024-04-29", "2024-02-29")),
    ("in a year", ("2024-05-08", "2025-02-28", "2024-12-31")),
    # weekdays
    ("last Monday", LAST_MONDAY),
    ("last Friday", ("2023-05-05", "2024-02-23", "2023-12-29")),
    ("last Sunday", ("2023-05-07", "2024-02-25", "2023-12-24")),
    ("last Thursday", ("2023-05-04", "2024-02-22", "2023-12-28")),
    ("next Tuesday", ("2023-05-09", "2024-03-05", "2024-01-02")),
    ("next Monday", ("2023-05-15", "2024-03-04", "2024-01-01")),
    ("next Sunday", ("2023-05-14", "2024-03-03", "2024-01-07")),
    ("this Friday", ("2023-05-12", "2024-03-01", "2024-01-05")),
    ("on Saturday", ("2023-05-06", "2024-02-24", "2023-12-30")),
    ("on Wednesday", ("2023-05-03", "2024-02-28", "2023-12-27")),
    # weeks, weekends, months, quarters, years, seasons
    ("last week", LAST_WEEK),
    ("the past week", LAST_WEEK),
    ("this week", ("2023-05-08..2023-05-15", "2024-02-26..2024-03-04", "2023-12-25..2024-01-01")),
    ("next week", ("2023-05-15..2023-05-22", "2024-03-04..2024-03-11", "2024-01-01..2024-01-08")),
    ("last weekend", ("2023-05-06..2023-05-08", "2024-02-24..2024-02-26", "2023-12-23..2023-12-25")),
    ("this weekend", ("2023-05-13..2023-05-15", "2024-03-02..2024-03-04", "2023-12-30..2024-01-01")),
    ("next weekend", ("2023-05-20..2023-05-22", "2024-03-09..2024-03-11", "2024-01-06..2024-01-08")),
    ("last month", LAST_MONTH),
    ("this month", ("2023-05-01..2023-06-01", "2024-02-01..2024-03-01", "2023-12-01..2024-01-01")),
    ("next month", NEXT_MONTH),
    ("last quarter", ("2023-01-01..2023-04-01", "2023-10-01..2024-01-01", "2023-07-01..2023-10-01")),
    ("this quarter", ("2023-04-01..2023-07-01", "2024-01-01..2024-04-01", "2023-10-01..2024-01-01")),
    ("next quarter", ("2023-07-01..2023-10-01", "2024-04-01..2024-07-01", "2024-01-01..2024-04-01")),
    ("last year", LAST_YEAR),
    ("this year", ("2023-01-01..2024-01-01", "2024-01-01..2025-01-01", "2023-01-01..2024-01-01")),
    ("next year", ("2024-01-01..2025-01-01", "2025-01-01..2026-01-01", "2024-01-01..2025-01-01")),
    ("earlier this year", ("2023-01-01..2023-05-09", "2024-01-01..2024-03-01", "2023-01-01..2024-01-01")),
    ("earlier this month", ("2023-05-01..2023-05-09", "2024-02-01..2024-03-01", "2023-12-01..2024-01-01")),
    ("last summer", ("2022-06-01..2022-09-01", "2023-06-01..2023-09-01", "2023-06-01..2023-09-01")),
    ("this summer", ("2023-06-01..2023-09-01", "2024-06-01..2024-09-01", "2023-06-01..2023-09-01")),
    ("next summer", ("2023-06-01..2023-09-01", "2024-06-01..2024-09-01", "2024-06-01..2024-09-01")),
    ("last spring", ("2022-03-01..2022-06-01", "2023-03-01..2023-06-01", "2023-03-01..2023-06-01")),
    ("last winter", ("2022-12-01..2023-03-01", "2022-12-01..2023-03-01", "2022-12-01..2023-03-01")),
    ("last autumn", ("2022-09-01..2022-12-01", "2023-09-01..2023-12-01", "2023-09-01..2023-12-01")),
    # months named
    ("last May", ("2022-05-01..2022-06-01", "2023-05-01..2023-06-01", "2023-05-01..2023-06-01")),
    ("last December", ("2022-12-01..2023-01-01", "2023-12-01..2024-01-01", "2022-12-01..2023-01-01")),
    ("in March", ("2023-03-01..2023-04-01", "2023-03-01..2023-04-01", "2023-03-01..2023-04-01")),
    ("in January", ("2023-01-01..2023-02-01", "2024-01-01..2024-02-01", "2023-01-01..2023-02-01")),
    ("next April", ("2024-04-01..2024-05-01", "2024-04-01..2024-05-01", "2024-04-01..2024-05-01")),
    ("this June", ("2023-06-01..2023-07-01", "2024-06-01..2024-07-01", "2023-06-01..2023-07-01")),
    # years and explicit dates
    ("in 2019", every("2019-01-01..2020-01-01")),
    ("since 2020", every("2020-01-01..2021-01-01")),
    ("15/03/2023", every("2023-03-15")),
    ("on 3 May 2023", every("2023-05-03")),
    ("May 3rd, 2022", every("2022-05-03")),
    ("2023-04-17", every("2023-04-17")),
    ("3 May", every("2023-05-03")),
    ("March 3rd", every("2023-03-03")),
    ("25 December", ("2022-12-25", "2023-12-25", "2023-12-25")),
    ("1st of June", ("2022-06-01", "2023-06-01", "2023-06-01")),
    # Spanish, German, French
    ("ayer", YESTERDAY),
    ("gestern", YESTERDAY),
    ("hier", YESTERDAY),
    ("mañana", TOMORROW),
    ("morgen", TOMORROW),
    ("demain", TOMORROW),
    ("anteayer", BEFORE_YESTERDAY),
    ("vorgestern", BEFORE_YESTERDAY),
    ("avant-hier", BEFORE_YESTERDAY),
    ("hace dos días", TWO_DAYS_AGO),
    ("vor 2 Tagen", TWO_DAYS_AGO),
    ("il y a 2 jours", TWO_DAYS_AGO),
    ("hace una semana", A_WEEK_AGO),
    ("vor einer Woche", A_WEEK_AGO),
    ("il y a une semaine", A_WEEK_AGO),
    ("hace un año", A_YEAR_AGO),
    ("vor einem Jahr", A_YEAR_AGO),
    ("il y a un an", A_YEAR_AGO),
    ("la semana pasada", LAST_WEEK),
    ("letzte Woche", LAST_WEEK),
    ("la semaine dernière", LAST_WEEK),
    ("el mes pasado", LAST_MONTH),
    ("letzten Monat", LAST_MONTH),
    ("le mois dernier", LAST_MONTH),
    ("el año pasado", LAST_YEAR),
    ("letztes Jahr", LAST_YEAR),
    ("l'année dernière", LAST_YEAR),
    ("el próximo mes", NEXT_MONTH),
    ("nächsten Monat", NEXT_MONTH),
    ("le mois prochain", NEXT_MONTH),
    ("el lunes pasado", LAST_MONDAY),
    ("letzten Montag", LAST_MONDAY),
    ("lundi dernier", LAST_MONDAY),
]
CASES = [
    (expression, anchor, expected)
    for expression, values in TABLE
    for anchor, expected in zip(ANCHORS, values, strict=True)
]


def test_the_table_has_at_least_200_cases() -> None:
    assert len(CASES) >= 200


def _bounds(expected: str) -> tuple[date, date]:
    if ".." in expected:
        start, end = expected.split("..")
        return date.fromisoformat(start), date.fromisoformat(end)
    day = date.fromisoformat(expected)
    return day, day + timedelta(days=1)


@pytest.mark.parametrize(("expression", "anchor", "expected"), CASES, ids=[f"{e}@{a:%Y-%m-%d}" for e, a, _ in CASES])
def test_each_expression_resolves_against_its_anchor(expression: str, anchor: datetime, expected: str) -> None:
    span = resolve(f"We talked about it {expression}, remember.", anchor)
    assert span is not None, expression
    assert (span.start.date(), span.end.date()) == _bounds(expected)
    said, meant = span.expression.casefold(), expression.casefold()
    assert said in meant or meant in said


@pytest.mark.parametrize("words", ["recently", "a while ago", "back in the day", "some time ago", "lately"])
async def test_unresolvable_expressions_keep_their_words_and_anchor(loop: Loop, words: str) -> None:
    assert resolve(f"I changed the filter {words}.", ANCHORS[0]) is None
    saved = await loop.save(f"I changed the pool filter {words}.", user="u", at=ANCHORS[0])
    assert saved.action == "created" and saved.learning is not None
    assert saved.learning.said_at == ANCHORS[0] and saved.learning.event_at is None


async def test_dated_statements_are_stored_and_only_momentary_ones_refused(loop: Loop) -> None:
    said = datetime(2023, 7, 3, 10, 0, tzinfo=UTC)
    aov = await loop.save("AOV last quarter was €64.20", user="shop", at=said)
    assert aov.action == "created" and aov.learning is not None
    assert (aov.learning.event_at, aov.learning.event_until) == (
        datetime(2023, 4, 1, tzinfo=UTC),
        datetime(2023, 7, 1, tzinfo=UTC),
    )
    meant = await loop.save("No, I meant last month, not last week", user="shop", at=said)
    assert meant.action == "created"
    price = await loop.save("The price right now is 3.20", user="shop", at=said)
    assert price.action == "refused" and price.rule == "unstable.momentary"
    assert momentary("I'm in a meeting") and not momentary("I'm training for a marathon")


async def test_the_block_shows_resolved_dates_for_relative_texts(loop: Loop) -> None:
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    await loop.save("I went to the LGBTQ support group yesterday and it was powerful.", user="caroline", at=said)
    block = (await loop.retrieve_context("caroline", "When did I go to the support group?")).block
    assert "yesterday (7 May 2023)" in block
    assert dated("AOV last quarter was €64.20", datetime(2023, 1, 1, tzinfo=UTC), datetime(2023, 4, 1, tzinfo=UTC)) == (
        "AOV last quarter (Q1 2023) was €64.20"
    )


async def test_measurements_on_different_days_are_records_not_versions(loop: Loop) -> None:
    first = await loop.save("I weighed 82.4 kg this morning.", user="w", at=datetime(2023, 5, 3, 7, tzinfo=UTC))
    second = await loop.save("I weighed 81.9 kg this morning.", user="w", at=datetime(2023, 5, 10, 7, tzinfo=UTC))
    assert (first.action, second.action) == ("created", "created")
    same_day = await loop.save("I weighed 81.5 kg this morning.", user="w", at=datetime(2023, 5, 10, 9, tzinfo=UTC))
    assert same_day.action == "new_version"  # the same morning: a corrected reading


async def test_a_learning_said_in_the_asked_span_needs_less_similarity_to_be_shown(loop: Loop) -> None:
    """Retrieval abstains below the noise floor, but being said in the span a question asks about is evidence of
    relevance too: such a learning needs half the floor (`RetrievalConfig.timely_floor`)."""
    await loop.save("We went hiking in the Alps with the kids.", user="h", at=datetime(2023, 5, 20, tzinfo=UTC))
    await loop.save("We went hiking in the Dolomites with friends.", user="h", at=datetime(2023, 8, 20, tzinfo=UTC))
    asked = await loop.retrieve_context("h", "Where did we go last May?", at=datetime(2023, 6, 10, tzinfo=UTC))
    assert [i.learning.text for i in asked.items] == ["We went hiking in the Alps with the kids."]
    a_year_on = await loop.retrieve_context("h", "Where did we go last May?", at=datetime(2024, 6, 10, tzinfo=UTC))
    assert a_year_on.items == []  # May 2024: nothing was said then, and nothing fits well enough


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("Altezza di Matteo alla visita del 10 gennaio: 92 cm.", date(2026, 1, 10)),
        ("Peso da Ana em 3 de maio: 61 kg.", date(2026, 5, 3)),
        ("Wizyta u dentysty 5 maja o 10:00.", date(2026, 5, 5)),
        ("Het pakket kwam op 12 januari.", date(2026, 1, 12)),
        ("Toplantı 7 mayıs tarihindeydi.", date(2026, 5, 7)),
        ("Встреча была 3 сентября.", date(2026, 9, 3)),
        ("Mötet var den 14 oktober 2025.", date(2025, 10, 14)),
    ],
)
def test_dates_in_more_languages_come_from_dateparsers_month_names(text: str, day: date) -> None:
    span = resolve(text, datetime(2026, 11, 26, tzinfo=UTC))
    assert span is not None and span.start.date() == day and span.granularity == "day"


@pytest.mark.parametrize("text", ["Maja 5 years old likes apples.", "I bought 3 sets of tires.", "Gen 2 kettles."])
def test_short_month_forms_and_names_are_not_dates(text: str) -> None:
    assert resolve(text, datetime(2026, 11, 26, tzinfo=UTC)) is None
