"""Reading numbers with their units: money in cents, a unit per something, one value in two units, ranges
and changes, clocks in Korean, Japanese and Chinese, and dates that look like numbers."""

from __future__ import annotations

import pytest

from learnloop.capture.quantities import quantities


def read(text: str) -> list[tuple[float, str, bool]]:
    return [(round(q.value, 4), q.dimension, q.retracted) for q in quantities(text)]


def meets(a: str, b: str) -> bool:
    (x,), (y,) = quantities(a), quantities(b)
    return x.meets(y)


def test_cents_are_money_in_whatever_currency_is_meant() -> None:
    assert read("plus 30 cents per transaction") == [(0.3, "currency:?", False)]
    assert meets("30 cents", "$0.30") and meets("30 cents", "€0.30")
    assert not meets("30 cents", "$0.40")


def test_a_unit_per_something_that_is_no_unit_is_the_unit() -> None:
    assert read("30 seconds per move") == [(30.0, "second", False)]
    assert meets("one hour per day", "60 minutes")
    assert read("3.5 L/hr")[0][1] == "meter ** 3 / second"  # a real rate stays a rate


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("1 h 30 min", 90.0), ("2 hours 15 minutes", 135.0), ("1시간 45분", 105.0), ("1時間30分です", 90.0)],
)
def test_one_value_in_two_units_is_one_quantity(text: str, minutes: float) -> None:
    (quantity,) = quantities(text)
    assert quantity.dimension == "second" and meets(text, f"{minutes} minutes")


def test_from_to_takes_a_value_back_only_when_something_changed() -> None:
    assert [r for _, _, r in read("Lighting runs from 10:00 to 18:00.")] == [False, False]
    assert [r for _, _, r in read("The fee went from $5 to $7.")] == [True, False]
    assert [r for _, _, r in read("Brew day moved from 9 am to 10 am")] == [True, False]
    assert [r for _, _, r in read("Die Miete wurde von 800 auf 900 Euro erhöht.")] == [True, False]


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("마감 시간은 오후 4시이다.", [960.0]),
        ("毎朝9時30分に始まる", [570.0]),
        ("仓库每天下午3点截单。", [900.0]),
        ("仓库每天15:00截单。", [900.0]),
        ("매장 영업시간은 오전 10시부터 오후 6시까지입니다.", [600.0, 1080.0]),
    ],
)
def test_clocks_in_korean_japanese_and_chinese(text: str, minutes: list[float]) -> None:
    assert [(v, d) for v, d, _ in read(text)] == [(m, "time_of_day") for m in minutes]


def test_numbers_that_are_dates_names_or_points_are_not_clocks_or_values() -> None:
    assert read("Gewogen am 3. Mai: 82 kg.") == [(82.0, "kilogram", False)]
    assert all(d != "time_of_day" for _, d, _ in read("テストで3点取った"))  # in Japanese 点 counts points
    assert quantities("1일차 만찬은 호텔에서 열린다.") == ()  # "day 1": a name
    assert quantities("O contrato do apartamento 301 vence em março.") == ()
