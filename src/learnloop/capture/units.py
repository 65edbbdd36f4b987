"""Unit spellings resolved to their SI dimension and a linear map onto base units, by `pint`.

`pint` (a maintained units library) knows the units; this module knows how people spell them in learnings
("L/hr", "°C", "US gal", "mph", "Stunden") and keeps pint's registry loaded once, lazily (about 0.4 s with
its cache; most saves never need it). Resolution is memoised per spelling, so a comparison of two values is
plain float arithmetic.
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["COUNTED", "UNIT_ALIASES", "UnitMap", "resolve", "unit_dimension"]

# Spellings pint reads differently from everyday text (or not at all).
UNIT_ALIASES = {
    "c": "degC",
    "°c": "degC",
    "ºc": "degC",
    "f": "degF",
    "°f": "degF",
    "ºf": "degF",
    "celsius": "degC",
    "centigrade": "degC",
    "fahrenheit": "degF",
    "grad": "degC",
    "l": "liter",
    "lt": "liter",
    "ltr": "liter",
    "litres": "liter",
    "litre": "liter",
    "liters": "liter",
    "liter": "liter",
    "litros": "liter",
    "litro": "liter",
    "hl": "hectoliter",
    "ml": "milliliter",
    "h": "hour",
    "hr": "hour",
    "hrs": "hour",
    "std": "hour",
    "stunden": "hour",
    "stunde": "hour",
    "horas": "hour",
    "heures": "hour",
    "heure": "hour",
    "hora": "hour",
    "ora": "hour",
    "ore": "hour",
    "uur": "hour",
    "min": "minute",
    "mins": "minute",
    "minuten": "minute",
    "minutos": "minute",
    "minutes": "minute",
    "sekunden": "second",
    "sekunde": "second",
    "segundos": "second",
    "secondes": "second",
    "secondi": "second",
    "seconden": "second",
    "sekund": "second",
    "sekundy": "second",
    "minuti": "minute",
    "minuty": "minute",
    "minut": "minute",
    "minuter": "minute",
    "timme": "hour",
    "dag": "day",  # Dutch and Swedish day, not pint's decagram
    "dagar": "day",
    "veckor": "week",
    "vecka": "week",
    "månad": "month",
    "månader": "month",
    "år": "year",
    "timmar": "hour",
    "godzin": "hour",
    "godziny": "hour",
    "hodin": "hour",
    "hodiny": "hour",
    "saat": "hour",
    "jam": "hour",
    "dakika": "minute",
    "menit": "minute",
    "detik": "second",
    "saniye": "second",
    "kilometrů": "kilometer",
    "kilometry": "kilometer",
    "kilometrów": "kilometer",
    # Lengths, masses, volumes and durations as Romance, Slavic, Turkic and South-East Asian texts write them.
    **dict.fromkeys(("kilómetros", "kilómetro", "kilometros", "kilometro", "quilômetros", "quilômetro"), "kilometer"),
    **dict.fromkeys(("quilómetros", "quilómetro", "kilomètres", "kilomètre", "chilometri", "chilometro"), "kilometer"),
    **dict.fromkeys(("километров", "километра", "километр", "км"), "kilometer"),
    **dict.fromkeys(("metros", "metro", "metri", "mètres", "mètre", "метров", "метра", "метр"), "meter"),
    **dict.fromkeys(
        ("kilogramos", "kilogramo", "quilos", "quilogramas", "chilogrammi", "кг", "килограммов"), "kilogram"
    ),
    **dict.fromkeys(("килограмма", "килограмм", "kilogramów"), "kilogram"),
    **dict.fromkeys(("litri", "литров", "литра", "литр", "litrów"), "liter"),
    **dict.fromkeys(("часа", "часов", "час"), "hour"),
    **dict.fromkeys(("минут", "минуты", "минута"), "minute"),
    **dict.fromkeys(("дней", "дня", "день", "hari", "ngày", "gün", "dni"), "day"),
    **dict.fromkeys(("недель", "недели", "неделя", "minggu", "tuần", "hafta", "tygodni", "tygodnie"), "week"),
    **dict.fromkeys(("месяцев", "месяца", "месяц", "bulan", "tháng", "miesięcy", "miesiące"), "month"),
    **dict.fromkeys(("лет", "года", "год", "tahun", "năm", "yıl"), "year"),
    **dict.fromkeys(("giờ", "tiếng"), "hour"),
    "phút": "minute",
    "sec": "second",
    "secs": "second",
    "s": "second",
    "ms": "millisecond",
    "d": "day",
    # Korean and Japanese durations (a Korean unit's particles are cut by `quantities`).
    "시간": "hour",
    "時間": "hour",
    "분": "minute",
    "分": "minute",
    "分間": "minute",
    "초": "second",
    "秒": "second",
    "주": "week",
    "週間": "week",
    "개월": "month",
    "ヶ月": "month",
    # Chinese, Japanese and Korean measures (no year or day: "2024年", "3月5日" are dates).
    "毫克": "milligram",
    "克": "gram",
    "公斤": "kilogram",
    "千克": "kilogram",
    "毫升": "milliliter",
    "升": "liter",
    "公里": "kilometer",
    "千米": "kilometer",
    "米": "meter",
    "厘米": "centimeter",
    "毫米": "millimeter",
    "小时": "hour",
    "小時": "hour",
    "分钟": "minute",
    "分鐘": "minute",
    "周": "week",
    "个月": "month",
    "個月": "month",
    "グラム": "gram",
    "ミリグラム": "milligram",
    "キログラム": "kilogram",
    "リットル": "liter",
    "ミリリットル": "milliliter",
    "キロメートル": "kilometer",
    "メートル": "meter",
    "センチ": "centimeter",
    "그램": "gram",
    "밀리그램": "milligram",
    "킬로그램": "kilogram",
    "리터": "liter",
    "밀리리터": "milliliter",
    "킬로미터": "kilometer",
    "미터": "meter",
    "센티미터": "centimeter",
    "か月": "month",
    "días": "day",
    "dias": "day",
    "tage": "day",
    "tagen": "day",
    "jours": "day",
    "giorni": "day",
    "dagen": "day",
    "wochen": "week",
    "semanas": "week",
    "semaines": "week",
    "settimane": "week",
    "weken": "week",
    "monate": "month",
    "meses": "month",
    "mois": "month",
    "mesi": "month",
    "maanden": "month",
    "jahre": "year",
    "años": "year",
    "ans": "year",
    "anni": "year",
    "anos": "year",
    "jaar": "year",
    "yr": "year",
    "yrs": "year",
    "gal": "gallon",
    "gals": "gallon",
    "oz": "ounce",
    "floz": "fluid_ounce",
    "lbs": "pound",
    "lb": "pound",
    "kgs": "kilogram",
    "kilo": "kilogram",
    "kilos": "kilogram",
    "mi": "mile",
    "kph": "kilometer/hour",
    "kmh": "kilometer/hour",
    "km/h": "kilometer/hour",
    "mph": "mile/hour",
    "%": "percent",
    "‰": "permille",
    "pct": "percent",
    "percent": "percent",
    "prozent": "percent",
    "por ciento": "percent",
    "pour cent": "percent",
    "gb": "gigabyte",
    "mb": "megabyte",
    "kb": "kilobyte",
    "tb": "terabyte",
    "gbit": "gigabit",
    "mbit": "megabit",
    "mbps": "megabit/second",
    "gbps": "gigabit/second",
    "kw": "kilowatt",
    "kwh": "kilowatt_hour",
    "mwh": "megawatt_hour",
    "w": "watt",
    "v": "volt",
    "psi": "psi",
    "bar": "bar",
    "hpa": "hectopascal",
    "cm": "centimeter",
    "mm": "millimeter",
    "m": "meter",
    "km": "kilometer",
    "ft": "foot",
    "feet": "foot",
    "in": "inch",
    "inches": "inch",
    "g": "gram",
    "gramm": "gram",
    # Spellings whose case matters to pint, read case-folded here: the one people mean.
    "kpa": "kilopascal",
    "mpa": "megapascal",
    "mah": "milliampere_hour",
    "db": "decibel",
    "kilogramm": "kilogram",
    "milligramm": "milligram",
    "gramos": "gram",
    "grammes": "gram",
    "grammi": "gram",
    "gramas": "gram",
    "mg": "milligram",
    "µg": "microgram",
    "ug": "microgram",
    "t": "metric_ton",
    "tonnes": "metric_ton",
    "tons": "metric_ton",
    "cal": "calorie",
    "kcal": "kilocalorie",
    "ppm": "ppm",
    "hz": "hertz",
    "ghz": "gigahertz",
    "mhz": "megahertz",
    "rpm": "revolutions_per_minute",
}
# Units that pint does not define, compared by spelling.
COUNTED = {"bpm", "ibu", "srm", "ebc", "plato", "brix", "abv", "og", "fg", "x", "k", "reps", "sets"}
_registry: Any = None
_registry_lock = threading.Lock()


def _units() -> Any:
    """pint's registry, loaded on first use (about 0.4 s with its cache; most saves never need it)."""
    global _registry
    if _registry is None:
        with _registry_lock:
            if _registry is None:
                import pint

                try:
                    registry: Any = pint.UnitRegistry(cache_folder=":auto:")
                except OSError:  # a read-only home: load without the cache
                    registry = pint.UnitRegistry()
                if "revolutions_per_minute" not in registry:  # the cached registry may already hold it
                    registry.define("revolutions_per_minute = revolution / minute = rpm_")
                _registry = registry
    return _registry


@dataclass(frozen=True, slots=True)
class UnitMap:
    """How to bring a value in one unit onto its dimension's base: base = value * scale + offset."""

    dimension: str
    scale: float
    offset: float


_LENGTH = r"(?:kilo|centi|milli)?met(?:er|re)s?|[ckm]?m|ft|feet|foot|in|inch(?:es)?|yards?|yd|miles?|mi"
_POWER = re.compile(rf"(?P<kind>square|cubic|sq\.?|cu\.?)(?P<base>{_LENGTH})|(?P<unit>{_LENGTH})(?P<sup>[²³23])")


@functools.lru_cache(maxsize=2048)
def resolve(spelling: str) -> UnitMap | None:
    """A unit spelling → its dimension and linear map, or None when it is not a physical unit."""
    key = re.sub(r"\s+per\s+", "/", spelling.casefold()).replace(" ", "")
    name = UNIT_ALIASES.get(key)
    power = _POWER.fullmatch(key)
    if name is None and power is not None:  # "square metres", "sq ft", "cubic yards", "m²", "km2"
        base = power.group("base") or power.group("unit")
        exponent = 2 if (power.group("kind") or power.group("sup")) in ("square", "sq", "sq.", "²", "2") else 3
        if UNIT_ALIASES.get(base, base) in COUNTED or resolve(base) is None:
            return None
        name = f"({UNIT_ALIASES.get(base, base)})**{exponent}"
    if name is None:
        if "/" in key:
            left, _, right = key.partition("/")
            parts = [UNIT_ALIASES.get(left, left), UNIT_ALIASES.get(right, right)]
            name = f"{parts[0]}/{parts[1]}"
        elif len(key) < 2 or key in COUNTED or not key.isascii():
            return None
        else:
            name = key
    registry = _units()
    try:
        unit = registry.Unit(name)
        zero = registry.Quantity(0.0, unit).to_base_units()
        one = registry.Quantity(1.0, unit).to_base_units()
    except Exception:  # pint's errors for unknown or odd spellings are several unrelated types
        return None
    dimension = str(zero.units)
    if dimension == "radian" and name not in ("degree", "radian", "revolutions_per_minute"):
        return None  # "1 turns on at sunset": pint's "turn" is an angle; in text it is a verb
    if dimension == "dimensionless" and name not in ("percent", "permille", "ppm"):
        return None  # pint calls "dozen", "radian" etc. units; for us they are counts
    return UnitMap(dimension, float(one.magnitude - zero.magnitude), float(zero.magnitude))


def unit_dimension(spelling: str) -> str | None:
    """The SI dimension of a unit spelling ("L/hr" → "meter ** 3 / second"), or None when pint has none."""
    found = resolve(spelling)
    return None if found is None else found.dimension
