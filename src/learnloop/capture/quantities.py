"""Numbers with their units, read from a learning's text, and compared as quantities.

Dedupe must tell "3.5 L/hr" and "0.92 US gal/hr" apart from "1.3 US gal/hr": the first pair is one value
in two units (skip), the second a change (new version). Units are resolved by `pint` (a maintained units
library) to a linear map onto SI base units, once per unit spelling; comparisons are then plain float
arithmetic. Each value carries the interval its spelling implies — "151 °F" is 150.5–151.5 °F, "~3.5" or
"about 3.5" is ±5 % — and two values are the same when their intervals meet in base units.

What pint does not know is still compared, by spelling: currencies ("€64.20" against "EUR 64.20", never
against dollars), counted nouns ("2 kids" against "3 kids") and bare numbers.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..terms import stem
from .lexicon import MONTHS
from .units import COUNTED, UNIT_ALIASES, UnitMap, resolve

__all__ = ["Quantity", "quantities"]

# Words that turn into numbers in the languages learnloop reads (the small ones people write out).
_NUMBER_WORDS = {
    **dict.fromkeys(("zero", "null", "cero", "zéro", "nulla"), 0),
    **dict.fromkeys(("one", "uno", "una", "eins", "ein", "eine", "un", "une", "um", "uma", "één"), 1),
    **dict.fromkeys(("two", "dos", "zwei", "deux", "due", "dois", "duas", "twee"), 2),
    **dict.fromkeys(("three", "tres", "drei", "trois", "tre", "três", "drie"), 3),
    **dict.fromkeys(("four", "cuatro", "vier", "quatre", "quattro", "quatro"), 4),
    **dict.fromkeys(("five", "cinco", "fünf", "cinq", "cinque", "vijf"), 5),
    **dict.fromkeys(("six", "seis", "sechs", "sei", "zes"), 6),
    **dict.fromkeys(("seven", "siete", "sieben", "sept", "sette", "sete", "zeven"), 7),
    **dict.fromkeys(("eight", "ocho", "acht", "huit", "otto", "oito"), 8),
    **dict.fromkeys(("nine", "nueve", "neun", "neuf", "nove", "negen"), 9),
    **dict.fromkeys(("ten", "diez", "zehn", "dix", "dieci", "dez", "tien"), 10),
    **dict.fromkeys(("eleven", "once", "elf", "onze", "undici"), 11),
    **dict.fromkeys(("twelve", "doce", "zwölf", "douze", "dodici", "twaalf", "dozen"), 12),
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "half": 0.5,
    "twice": 2,
    "once": 1,
    "thrice": 3,
    "single": 1,
    "double": 2,
    "triple": 3,
}
# "once" is also Spanish for eleven; as an English adverb ("once a week") it is the one people mean.
_NUMBER_WORDS["once"] = 1

_APPROX = re.compile(
    r"(?:~|≈|\babout|\baround|\broughly|\bapprox(?:imately|\.)?|\bnearly|\balmost|\bca\.|\bcirca|\betwa|\bungefähr"
    r"|\benviron|\baproximadamente|\bcerca de|\bcirca|\bvers|\bzo'n|\bongeveer|\bpresque)\s*$",
    re.IGNORECASE,
)
_CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₩": "KRW", "₹": "INR", "₽": "RUB", "CHF": "CHF"}
_CURRENCY_CODES = frozenset(
    "USD EUR GBP JPY KRW INR CHF CAD AUD NZD SEK NOK DKK PLN CZK HUF BRL MXN CNY RMB HKD SGD ZAR TRY RUB".split()
)
_CURRENCY_WORDS = {
    "dollar": "USD",
    "dollars": "USD",
    "euro": "EUR",
    "euros": "EUR",
    "pound": "GBP?",  # money or mass: left to context, see `_unit_token`
    "pounds": "GBP?",
    "yen": "JPY",
    "won": "KRW",
    "rupees": "INR",
    "francs": "CHF",
}
# One number: digits with thousands separators and a decimal part (either convention), or a number word.
_NUMBER = re.compile(
    r"(?P<cur>[$€£¥₩₹₽])?\s?"
    r"(?<![0-9A-Za-z_.,\u00c0-\u024f])(?P<num>[-−]?\d{1,3}(?:[,.' ]\d{3})+(?:[.,]\d+)?|[-−]?\d+(?:[.,]\d+)?)(?![\d])"
    r"|(?<![\w-])(?P<word>(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-(?:one|two|three|four|five|six|"
    r"seven|eight|nine)|[^\W\d_]+)(?=[\s-])",
    re.UNICODE,
)
_UNIT = re.compile(
    r"\s?-?\s?(?:(?i:US|U\.S\.|imp\.?|imperial)\s)?(?P<unit>%|‰|°\s?[CFcf]\b|º\s?[CFcf]\b|(?:[^\W\d_]|[µ°²³])+(?:\s?(?:/|per\s)\s?(?:[^\W\d_]|[²³])+)?)",
    re.UNICODE,
)
# Words that follow a number without being its unit ("3 of them", "5 and 6").
_NOT_UNITS = frozenset(
    """
    a an and or of to the in on at by for with from than as is are was were be per via vs versus but if so
    not no y o e et und oder de del la le les el los las der die das den dem des im am au aux du à en und
    i me my we our you your he she it they them this that these those which who
    """.split()
)
_PER = re.compile(r"\s?(?:/|per\s|a\s|an\s|each\s|every\s|pro\s|por\s|par\s)\s?([^\W\d_]+)", re.UNICODE)
_TIME_UNITS = frozenset(("second", "minute", "hour", "day", "week", "month", "year", "night", "session", "batch"))

# A number right after a capitalised word, "#", "No." or a word that numbers things names an instance.
_LABEL_NOUNS = frozenset(
    """
    batch version tier level step phase room floor line site store warehouse building zone lane gate station
    shelf aisle bay dock unit kettle oven tank fermenter fermentor bed plot row team squad group class grade
    season episode chapter lesson module sprint release build ticket case order invoice account server node
    cluster region channel track route bus apartment flat suite lot locker table seat pump machine camera
    printer truck van vehicle lab ward clinic office branch shop plant line cohort wave round week
    """.split()
)
_NOT_LABELS = frozenset(
    """
    about around roughly approx approximately nearly almost only just over under exactly at least most
    is was are were be has had have its it we i he she they our my their his her the a an to of in on by for
    with from than and or but every each per after before since until within up down some all any
    """.split()
)
_WORD_BEFORE = re.compile(r"(#|\bN[or]\.|\bn[º°]|\b[vV]\.?|[^\W\d_][\w'-]*)[\s-]?$")

_MULTIPLIERS = {"k": 1e3, "mn": 1e6, "mio": 1e6, "bn": 1e9, "mrd": 1e9, "million": 1e6, "billion": 1e9, "thousand": 1e3}


@dataclass(frozen=True, slots=True)
class Quantity:
    """One number in a text: its value, unit and dimension, and where it stands.

    `dimension` is pint's SI dimension for physical units, ``currency:EUR`` for money, ``count:<stem>`` for
    a counted noun ("3 kids"), ``unit:<spelling>`` for a unit pint does not know, "" for a bare number.
    `rounding` is half the last written digit ("151" → 0.5, "3.5" → 0.05); `approx` is set by "~", "about".
    """

    value: float
    unit: str
    dimension: str
    rounding: float
    approx: bool
    start: int
    end: int
    retracted: bool = False

    def interval(self, *, spelled_alike: bool) -> tuple[float, float]:
        """The values (in base units) this number stands for. Written in the same unit as the number it is
        compared with, a number means itself ("4 L/hr" is not "3.5 L/hr"); converted, it means what its
        last digit allows ("151 °F" is 66.1 ± 0.3 °C), and an approximate one ±5 %."""
        half = 0.0 if spelled_alike else self.rounding
        if self.approx:
            half = max(half, abs(self.value) * 0.05)
        low, high = self.value - half, self.value + half
        mapping = resolve(self.unit) if self.unit and self.dimension and ":" not in self.dimension else None
        if mapping is not None:
            low, high = low * mapping.scale + mapping.offset, high * mapping.scale + mapping.offset
        return (low, high) if low <= high else (high, low)

    def meets(self, other: Quantity) -> bool:
        if self.dimension != other.dimension:
            return False
        alike = self.unit.casefold() == other.unit.casefold()
        a_low, a_high = self.interval(spelled_alike=alike)
        b_low, b_high = other.interval(spelled_alike=alike)
        tolerance = 1e-9 * max(abs(a_low), abs(a_high), abs(b_low), abs(b_high), 1e-12)
        return a_low <= b_high + tolerance and b_low <= a_high + tolerance


def _parse_number(raw: str) -> tuple[float, float] | None:
    """The value and its rounding half-width: "1,250" → (1250, 0.5), "3,5" → (3.5, 0.05)."""
    text = raw.replace("−", "-").replace("'", ",").replace(" ", ",")
    if re.fullmatch(r"-?\d{1,3}(?:[,.]\d{3})+", text):  # thousands only: 1,250 or 1.250
        text = re.sub(r"[,.]", "", text)
    elif re.fullmatch(r"-?\d{1,3}(?:,\d{3})+\.\d+", text):
        text = text.replace(",", "")
    elif re.fullmatch(r"-?\d{1,3}(?:\.\d{3})+,\d+", text):
        text = text.replace(".", "").replace(",", ".")
    else:
        text = text.replace(",", ".")
    try:
        value = float(text)
    except ValueError:
        return None
    decimals = len(text.partition(".")[2])
    return value, 0.5 * 10.0**-decimals


def _is_label(text: str, start: int) -> bool:
    match = _WORD_BEFORE.search(text[max(0, start - 24) : start])
    if match is None:
        return False
    word = match.group(1)
    if word in _CURRENCY_CODES:
        return False  # "EUR 64.20": money
    if (word[0] in "#Nnv V" and len(word) <= 3 and not word.isalpha()) or word in ("v", "V"):
        return True
    folded = word.casefold()
    if folded in _LABEL_NOUNS:
        return True
    if not word[0].isupper() or folded in _NOT_LABELS or folded in _NUMBER_WORDS:
        return False
    starts_sentence = re.search(r"(?:^|[.!?:;]\s)\s*$", text[: start - len(match.group(0))])
    # "Use 4-5 L/hr": an ordinary word that starts a sentence is not a name.
    return not starts_sentence or _after_noun(text.casefold(), start)


# Base-form verbs a count often follows ("need 2 hours", "take 3 tablets"): what comes before a number decides
# whether it counts something (after a verb or preposition) or numbers it (after a noun: "light 1").
_VERBS_BEFORE_COUNTS = frozenset(
    """
    need take use run get make give cost pay spend buy own add set keep want do eat drink sleep walk cook bake
    brew hold fit serve seat feed water feeds allow allows limit cap average hit reach score lift bench squat
    deadlift ride swim read write play practise practice train study sell ship order book rent hire employ
    about around roughly approx approximately nearly almost only just over under exactly least most every each
    per than within after before since until up down some all any last first next top another ran had got made
    took gave ate drank bought sold paid spent kept held rode swam wrote slept drove flew grew won lost left sent
    built hit put cut did saw met went came became began
    """.split()
)


_ENGLISH = frozenset("the is are of and to in on for with has have was at by it this that an user user's".split())
_NOT_ENGLISH = frozenset("el la los las der die das le les il de und et y è una um uma een het".split())


def _english(text: str) -> bool:
    words = set(re.findall(r"[a-z']+", text.casefold()))
    return bool(words & _ENGLISH) and not words & _NOT_ENGLISH


def _in_code(text: str, start: int, end: int) -> bool:
    """Is the number part of an identifier joined by hyphens ("SKU 44-1087", "A-12", "B2-4")? A range of
    values ("4-5 L/hr", "100-120 ppm") is not: it has short parts, or a unit after it."""
    left = re.search(r"[\w-]*$", text[:start])
    right = re.match(r"[\w-]*", text[end:])
    run = (left.group(0) if left else "") + text[start:end] + (right.group(0) if right else "")
    if "-" not in run.strip("-"):
        return False
    parts = [p for p in run.split("-") if p]
    if any(re.search(r"[^\W\d_]", p) for p in parts):
        return True
    if not any(len(p) >= 3 for p in parts):
        return False
    after, _ = _unit_token(text, end + (len(right.group(0)) if right else 0))
    return not after or resolve(after) is None


def _after_noun(text: str, start: int) -> bool:
    """Is the number right after a singular noun-like word ("light 1", "variant 2")?"""
    match = re.search(r"([^\W\d_][\w'-]*)\s$", text[max(0, start - 24) : start])
    if match is None:
        return False
    word = match.group(1).casefold()
    return not (
        word in _NOT_LABELS
        or word in _VERBS_BEFORE_COUNTS
        or word in _NUMBER_WORDS
        or word.endswith(("s", "ed", "ly", "'"))
        or len(word) < 3
    )


_CLOCK = re.compile(r":(\d\d)(?::\d\d)?\s?(a\.?m\.?|p\.?m\.?|h|uhr)?\b|\s?(a\.?m\.?|p\.?m\.?|uhr|h00)(?![\w])", re.I)


def _clock(text: str, start: int, end: int, value: float, unit: str) -> tuple[float, int] | None:
    """A time of day ("17:00", "3 pm", "9:30am", "18 Uhr") as minutes after midnight, and where it ends."""
    if re.search(r"\d:$", text[max(0, start - 3) : start]):
        return None  # the minutes of a time already read
    match = _CLOCK.match(text, end)
    if match is None or value != int(value) or not 0 <= value <= 24:
        return None
    minutes = int(match.group(1) or 0)
    suffix = (match.group(2) or match.group(3) or "").casefold().replace(".", "")
    hours = int(value) % 12 + (12 if suffix == "pm" else 0) if suffix in ("am", "pm") else int(value)
    if not match.group(1) and suffix not in ("am", "pm", "uhr", "h00"):
        return None
    return float(hours * 60 + minutes), match.end()


def _unit_token(text: str, end: int) -> tuple[str, int]:
    """The unit spelled right after a number (and its end), or ("", end)."""
    match = _UNIT.match(text, end)
    if match is None:
        return "", end
    unit = match.group("unit")
    first = unit.split("/")[0].split()[0].casefold()
    if first in _NOT_UNITS:
        return "", end
    stop = match.end()
    per = _PER.match(text, stop)
    if "/" not in unit and per is not None and _resolve_time(per.group(1)):
        unit, stop = f"{unit}/{per.group(1)}", per.end()
    return unit, stop


def _resolve_time(word: str) -> bool:
    name = UNIT_ALIASES.get(word.casefold(), word.casefold().rstrip("s"))
    return name in _TIME_UNITS


def _dimension(unit: str, currency: str | None) -> tuple[str, UnitMap | None]:
    if currency:
        return f"currency:{currency}", None
    if not unit:
        return "", None
    if unit.upper() in _CURRENCY_CODES:
        return f"currency:{unit.upper()}", None
    money = _CURRENCY_WORDS.get(unit.casefold())
    if money is not None and not money.endswith("?"):
        return f"currency:{money}", None
    resolved = resolve(unit)
    if resolved is not None:
        return resolved.dimension, resolved
    word = unit.split("/")[0].split()[0].casefold()
    if word in COUNTED:
        return f"unit:{unit.casefold().replace(' ', '')}", None
    return f"count:{stem(word)}", None


@functools.lru_cache(maxsize=512)
def quantities(text: str) -> tuple[Quantity, ...]:
    """Every number in `text` with its unit, in order. Ranges ("4-5 L/hr") give both ends the unit."""
    found: list[tuple[float, float, str, str | None, int, int, int, bool]] = []
    times: list[int] = []
    for match in _NUMBER.finditer(text):
        currency: str | None = None
        if match.group("word"):
            word = match.group("word").casefold()
            if "-" in word:
                tens, _, ones = word.partition("-")
                number = float(_NUMBER_WORDS[tens] + _NUMBER_WORDS[ones])
            elif word in _NUMBER_WORDS:
                number = float(_NUMBER_WORDS[word])
            else:
                continue
            value, half, start, end = number, 0.0, match.start("word"), match.end("word")
        else:
            parsed = _parse_number(match.group("num"))
            if parsed is None:
                continue
            value, half = parsed
            start, end = match.start("num"), match.end("num")
            if match.group("cur"):
                currency, start = _CURRENCY_SYMBOLS[match.group("cur")], match.start("cur")
        if not currency and _is_label(text, start):
            continue  # "Gen 1", "Batch 12", "#7", "version 14": part of a name, not a value
        unit, stop = _unit_token(text, end)
        if unit.casefold() in MONTHS:
            continue  # "3 May": a date, read by `evidence`
        if re.search(r"\d:$", text[max(0, start - 3) : start]):
            continue  # the minutes of a time of day, read with its hour
        clock = _clock(text, start, end, value, unit)
        if clock is not None:
            minutes, stop = clock
            found.append((minutes, 0.0, "", None, start, stop, stop, False))
            times.append(len(found) - 1)
            continue
        number_text = match.group("num") or ""
        physical = bool(unit) and resolve(unit) is not None
        if not match.group("word") and not currency and not physical and re.fullmatch(r"(?:19|20)\d\d", number_text):
            continue  # a year ("in 2022", "the 2019 Barolo", "2024 peak season")
        if not currency and _in_code(text, start, end):
            continue  # part of a code: "SKU 44-1087", "A-12"
        if not currency and not physical and "." not in number_text and "," not in number_text:
            capitalised = unit[:1].isupper() and not unit[1:2].isupper()  # "3 Series", not "8 GPUs"
            if capitalised or (_english(text) and _after_noun(text, start)):
                continue  # "variant 1 uses…", "3 Series": numbering something, not measuring it
        if unit.casefold() in _MULTIPLIERS:
            value, half, unit = value * _MULTIPLIERS[unit.casefold()], half * _MULTIPLIERS[unit.casefold()], ""
            unit, stop = _unit_token(text, stop) if not currency else ("", stop)
        elif unit and end < len(text) and text[end].isalpha() and resolve(unit) is None:
            continue  # "1RM", "4K", "3D": a name, not a number of something
        if not currency and not unit:
            code = re.match(r"\s?([A-Z]{3})\b", text[end:])
            before = re.search(r"\b([A-Z]{3})\s?$", text[:start])
            if code and code.group(1) in _CURRENCY_CODES:
                currency, stop = code.group(1), end + code.end()
            elif before and before.group(1) in _CURRENCY_CODES:
                currency = before.group(1)
        approx = bool(_APPROX.search(text[max(0, start - 16) : start]))
        found.append((value, half, unit, currency, start, stop, end, approx))
    # A range's first end borrows the unit of the second: "4-5 L/hr", "between 60 and 65 °C".
    out: list[Quantity] = []
    for index, (value, half, unit, currency, start, stop, end, approx) in enumerate(found):
        if not unit and not currency and index + 1 < len(found):
            nxt = found[index + 1]
            gap = text[end : nxt[4]]
            if re.fullmatch(r"\s*(?:-|–|to|and|or|bis|a|à|y|e|tot)\s*", gap) and (nxt[2] or nxt[3]):
                unit, currency = nxt[2], nxt[3]
        dimension, _ = _dimension(unit, currency)
        if index in times:
            dimension = "time_of_day"
        spelled = "" if not dimension else (currency or unit)
        out.append(Quantity(value, spelled, dimension, half, approx, start, stop, _retracted(text, start)))
    return tuple(out)


_RETRACTION = re.compile(
    r"(?:\bnot|\bno longer|\binstead of|\brather than|\bfrom|\bwas|\bused to(?: be)?|\bformerly|\bpreviously"
    r"|\bno|\bnicht|\bstatt|\banstatt|\bvon|\bno es|\ben lugar de|\ben vez de|\bde|\bpas|\bau lieu de|\binvece di"
    r"|\bda|\bem vez de|\bniet|\bin plaats van|\bvan)\s+(?:(?:the|a|an|about|around|~|≈)\s+)?[$€£]?\s?$",
    re.IGNORECASE,
)
_FROM_TO = re.compile(r"\bfrom\s+$", re.IGNORECASE)


def _retracted(text: str, start: int) -> bool:
    """Is the number at `start` a value the sentence takes back ("184, not 190", "from 2 to 3", "instead of
    5")? Only words that clearly retract count; "from" only when a "to" follows."""
    before = text[max(0, start - 24) : start]
    match = _RETRACTION.search(before)
    if match is None:
        return False
    word = match.group(0).split()[0].casefold()
    if word in ("from", "von", "de", "da", "van"):
        return bool(re.match(r"[\d.,\s]*\S*\s+(?:to|auf|zu|a|à|para|naar|in)\b", text[start:], re.IGNORECASE))
    if word in ("was", "no"):
        return bool(re.search(r"\b(?:not|no longer|anymore|now)\b", text, re.IGNORECASE))
    return True
