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


@pytest.mark.parametrize(
    ("text", "value", "currency"),
    [
        ("Die Kfz-Versicherung kostet 62 € im Monat.", 62.0, "EUR"),
        ("Seit Januar kostet die Kfz-Versicherung 71 € monatlich.", 71.0, "EUR"),
        ("Czynsz to 2 400 zł miesięcznie.", 2400.0, "PLN"),
        ("Kira 7.500 TL oldu.", 7500.0, "TRY"),
        ("毎月の食費の予算は5万円。", 50000.0, "JPY"),
        ("食費の予算を月4万円に減らした。", 40000.0, "JPY"),
        ("월세는 50만 원이다", 500000.0, "KRW"),
        ("房租每月3万日元", 30000.0, "JPY"),
        # Thousands and millions as words, the currency after them, a code after the amount.
        ("Pensja: 12 tys. PLN netto.", 12000.0, "PLN"),
        ("Aidat 4 bin liraya çıktı", 4000.0, "TRY"),
        ("Gaji bulanan 8 juta rupiah.", 8000000.0, "IDR"),
        ("Стоимость ремонта 300 тыс. рублей.", 300000.0, "RUB"),
        ("The contract is worth 85k EUR.", 85000.0, "EUR"),
        ("Her salary is 95,000 USD a year.", 95000.0, "USD"),
    ],
)
def test_money_written_after_the_amount_and_east_asian_myriads(text: str, value: float, currency: str) -> None:
    assert [(v, d) for v, d, _ in read(text)] == [(value, f"currency:{currency}")]


def test_a_place_name_that_starts_with_a_myriad_is_no_number() -> None:
    assert quantities("千葉に住んでいる") == ()


def test_thousand_words_that_are_other_words_scale_only_money() -> None:
    assert [(q.value, q.dimension) for q in quantities("We bought 3 bin bags.")] == [(3.0, "count:bin")]
    assert [q.value for q in quantities("Fui a 2 mil metros de altura")] == [2.0]


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("El almacén de Valencia cierra a las 8 de la tarde.", 1200.0),
        ("Abre a las 9 de la mañana.", 540.0),
        ("Le magasin ferme à 8 heures du soir.", 1200.0),
        ("Chiude alle 8 di sera.", 1200.0),
        ("Ele chega às 10 da noite.", 1320.0),
        ("Wir essen um 7 Uhr abends.", 1140.0),  # and "um" is no Portuguese "one" here
        ("De winkel sluit om 8 uur 's avonds.", 1200.0),
    ],
)
def test_an_hour_with_the_part_of_the_day_after_it(text: str, minutes: float) -> None:
    assert [(v, d) for v, d, _ in read(text)] == [(minutes, "time_of_day")]
    assert meets(text, f"{int(minutes // 60):02d}:00")


@pytest.mark.parametrize(
    ("words", "figures"),
    [
        ("Noah has a three-quarter-hour lesson.", "Noah's lesson lasts 45 minutes."),
        ("It takes a quarter of an hour.", "It takes 15 minutes."),
        ("Der Bus braucht eine Dreiviertelstunde.", "Der Bus braucht 45 Minuten."),
        ("On attend un quart d'heure.", "On attend 15 minutes."),
        ("La espera es de media hora.", "La espera es de 30 minutos."),
        ("The duplex sits on a quarter-acre lot.", "The duplex lot is 0.25 acres."),
        ("Ein Zehntel seines Nettogehalts legt er zur Seite.", "Er spart 10 % seines Nettogehalts."),
        ("Field 7 covers 120,000 square metres.", "Field 7 is 12 hectares."),
        ("The flat is 850 sq. ft.", "The flat is 78.97 m²."),
    ],
)
def test_fractions_in_words_and_square_units_are_values(words: str, figures: str) -> None:
    assert meets(words, figures)


def test_a_quarter_that_measures_nothing_is_no_value() -> None:
    assert quantities("They live in the French Quarter.") == ()
    assert quantities("Revenue grew next quarter.") == ()
    assert read("It has 3 square windows.") == [(3.0, "count:squar", False)]


def test_units_in_more_languages_and_english_due_is_no_two() -> None:
    assert read("Das HTTP-Timeout beträgt 30 Sekunden.") == [(30.0, "second", False)]
    assert read("Elsas skärmtid är nu max 45 minuter per dag.") == [(45.0, "second", False)]  # dag: a day
    assert read("Tire rotation is due every 5k miles.") == [(5000.0, "meter", False)]
    assert read("Il pacco arriva in due giorni.") == [(2.0, "second", False)]


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("Every morning at half past nine, the team holds its standup.", 570.0),
        ("The user gets up at six in the morning.", 360.0),
        ("The bus leaves at a quarter to eight.", 465.0),
        ("The shop opens at ten past 8 am.", 490.0),
        ("Dinner is at 7 in the evening.", 1140.0),
        ("The walk is at seven o'clock.", 420.0),
        # Half hours in Italian, Spanish, French and Portuguese.
        ("Il volo parte alle sei e mezza di sera.", 1110.0),
        ("La cena es a las ocho y media de la tarde.", 1230.0),
        ("Le train part à huit heures et demie du soir.", 1230.0),
        ("Chego às oito e meia.", 510.0),
    ],
)
def test_times_of_day_said_in_words(text: str, minutes: float) -> None:
    assert [(v, d) for v, d, _ in read(text)] == [(minutes, "time_of_day")]


def test_a_half_that_is_no_clock_and_units_in_japanese_and_german() -> None:
    assert all(d != "time_of_day" for _, d, _ in read("Ho 3 e mezzo chili."))
    assert meets("ユーザーのタイヤ空気圧は230kPaだ。", "ユーザーのタイヤ空気圧は2.3barだ。")
    assert meets("Das Paket wiegt 1500 Gramm.", "Das Paket wiegt 1,5 kg.")


@pytest.mark.parametrize(
    ("text", "dimension"),
    [
        ("o usuário corre dez quilômetros", "meter"),
        ("corre 21 kilómetros los domingos", "meter"),
        ("бегает 5 километров", "meter"),
        ("beve 2 litri d'acqua", "meter ** 3"),
        ("pupuk diberikan setiap 3 minggu", "second"),
        ("zmieniane co 90 dni", "second"),
    ],
)
def test_units_in_more_languages(text: str, dimension: str) -> None:
    assert [q.dimension for q in quantities(text)] == [dimension]


def test_a_year_before_a_year_word_is_a_date() -> None:
    assert quantities("так он с 2022 года не работает") == ()
    assert quantities("L'objectif 85 mm est le mien") == ()  # a lens named by its focal length
