"""Time expressions in a learning, resolved against when it was said.

"I went to the support group yesterday", said on 8 May 2023, is a fact about 7 May 2023: the words are kept
as the user said them, and the resolved date or range is stored beside them (`event_at`, `event_until`) and
shown in the block ("… yesterday (7 May 2023)"). Relative expressions ("yesterday", "last quarter", "three
weeks ago", "next Tuesday", "last May") are found by patterns in English, Spanish, German and French and
resolved by calendar arithmetic, to a day, a week, a month, a quarter or a year; explicit dates ("3 May 2023",
"15/03/2023", "le 3 mai"; "10 gennaio", "3 de maio", "5 maja" in the thirteen more languages whose month
names come from dateparser's own tables) are read by `dateparser`, a maintained date library. What
cannot be resolved ("recently") keeps its words and its anchor.

Only claims whose truth changes by the minute are unstable (`momentary`): "the price right now", "I'm in a
meeting". They are not learnings.
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from .quantities import _NUMBER_WORDS
from .word_screen import TextWords, WordScreen, any_may_match

__all__ = [
    "MOMENTARY",
    "TimeSpan",
    "dated",
    "find_expression",
    "momentary",
    "render_span",
    "resolve",
    "stored_span",
]

_WEEKDAYS = {
    **dict.fromkeys(("monday", "lunes", "montag", "lundi"), 0),
    **dict.fromkeys(("tuesday", "martes", "dienstag", "mardi"), 1),
    **dict.fromkeys(("wednesday", "miércoles", "miercoles", "mittwoch", "mercredi"), 2),
    **dict.fromkeys(("thursday", "jueves", "donnerstag", "jeudi"), 3),
    **dict.fromkeys(("friday", "viernes", "freitag", "vendredi"), 4),
    **dict.fromkeys(("saturday", "sábado", "sabado", "samstag", "samedi"), 5),
    **dict.fromkeys(("sunday", "domingo", "sonntag", "dimanche"), 6),
}
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            "january enero januar janvier jan",
            "february febrero februar février fevrier feb",
            "march marzo märz mars mar",
            "april abril avril apr",
            "may mayo mai",
            "june junio juni juin jun",
            "july julio juli juillet jul",
            "august agosto août aout aug",
            "september septiembre septembre sep sept",
            "october octubre oktober octobre oct",
            "november noviembre novembre nov",
            "december diciembre dezember décembre decembre dec",
        ),
        start=1,
    )
    for name in names.split()
}
_UNITS = {
    **dict.fromkeys(("day", "days", "día", "días", "dia", "dias", "tag", "tage", "tagen", "jour", "jours"), "day"),
    **dict.fromkeys(("week", "weeks", "semana", "semanas", "woche", "wochen", "semaine", "semaines"), "week"),
    **dict.fromkeys(("fortnight", "fortnights"), "fortnight"),
    **dict.fromkeys(("month", "months", "mes", "meses", "monat", "monate", "monaten", "mois"), "month"),
    **dict.fromkeys(("quarter", "quarters", "trimestre", "trimestres", "quartal", "quartale"), "quarter"),
    **dict.fromkeys(
        ("year", "years", "año", "años", "ano", "anos", "jahr", "jahre", "jahren", "an", "ans", "année", "années"),
        "year",
    ),
    **dict.fromkeys(("weekend", "fin de semana", "wochenende", "week-end"), "weekend"),
}
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2)}
_DAYS = {
    **dict.fromkeys(("yesterday", "ayer", "gestern", "hier"), -1),
    **dict.fromkeys(
        ("today", "tonight", "this morning", "this afternoon", "this evening", "hoy", "heute", "aujourd'hui"), 0
    ),
    **dict.fromkeys(("tomorrow", "mañana", "morgen", "demain"), 1),
    **dict.fromkeys(("the day before yesterday", "anteayer", "antier", "vorgestern", "avant-hier"), -2),
    **dict.fromkeys(("the day after tomorrow", "pasado mañana", "übermorgen", "après-demain"), 2),
    **dict.fromkeys(("last night", "anoche", "gestern abend"), -1),
}
_LAST = r"(?:last|past|previous|pasad[oa]|letzte[nrs]?|vergangene[nrs]?|dernier|dernière|passée?)"
_THIS = r"(?:this|current|est[ea]|diese[nrs]?|ce|cette)"
_NEXT = r"(?:next|coming|próxim[oa]|que viene|nächste[nrs]?|kommende[nrs]?|prochain|prochaine)"
_UNIT = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
_WEEKDAY = "|".join(sorted(_WEEKDAYS, key=len, reverse=True))
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_SEASON = "|".join(_SEASONS)
_COUNT = (
    r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|a few|few|several"
    r"|un|una|uno|dos|tres|cuatro|cinco|ein|einem|einer|zwei|drei|vier|fünf|une|deux|trois|quatre|cinq)"
)

#: Languages whose month names come from dateparser's own tables (full names only: "set", "mag", "gen" are
#: words too), read in the day-first order they are written in ("10 gennaio", "3 de maio", "5 maja").
_MORE_LANGUAGES = ("it", "pt", "nl", "pl", "sv", "da", "nb", "fi", "tr", "cs", "ro", "id", "ru")


@functools.cache
def _more_months() -> dict[str, int]:
    from dateparser.languages import default_loader

    names = ("january february march april may june july august september october november december").split()
    found: dict[str, int] = {}
    for code in _MORE_LANGUAGES:
        info = default_loader.get_locale(code).info
        for number, key in enumerate(names, start=1):
            for name in info.get(key, ()):
                folded = name.casefold()
                if len(folded) >= 4 and folded.isalpha() and folded not in _MONTHS:
                    found.setdefault(folded, number)
    # An abbreviation ("elok" of "elokuuta", "febr") is a prefix of a full name of its month: too often a word.
    return {
        name: number
        for name, number in found.items()
        if not any(other != name and other.startswith(name) and found[other] == number for other in found)
    }


def _month_number(name: str) -> int:
    folded = name.casefold()
    return _MONTHS.get(folded) or _more_months()[folded]


@functools.cache
def _any_screen() -> Callable[[TextWords], bool]:
    return any_may_match(_screens())


@functools.cache
def _screens() -> tuple[WordScreen, ...]:
    """What each of `_patterns` needs to match (see `word_screen`): one of its words whole, or a shape of digits.
    The unit of "el año pasado" may follow "el" unspaced, so that pattern's words after it (pasado, dernier, ...)
    stand for it; a date names a month or is digits around '-', '.' or '/'."""
    after_unit = ("pasado", "pasada", "que viene", "dernier", "dernière", "prochain", "prochaine")
    return (
        WordScreen(_DAYS),  # day
        WordScreen(_UNITS),  # ago
        WordScreen(_UNITS),  # ago (hace, vor, il y a)
        WordScreen(_UNITS),  # in
        WordScreen(_WEEKDAYS),  # weekday
        WordScreen(_WEEKDAYS),  # weekday pasado
        WordScreen([*_UNITS, *_SEASONS]),  # period
        WordScreen(after_unit),  # period (el año pasado)
        WordScreen(_UNITS),  # earlier
        WordScreen(_MONTHS),  # month
        WordScreen(shape=r"(?:19|20)[0-9][0-9]"),  # year
        WordScreen(_MONTHS, shape=r"[0-9][./-][0-9]"),  # date
        WordScreen(_more_months()),  # date, in the more languages' month names
    )


@functools.cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The patterns, built on first use (dateparser's month tables load with them)."""
    more = "|".join(sorted(_more_months(), key=len, reverse=True))
    return (
        *_BASE_PATTERNS,
        ("date", re.compile(rf"\b\d{{1,2}}\.?\s+(?:de\s+)?(?:{more})\b(?:,?\s+(?:19|20)\d\d\b)?", re.IGNORECASE)),
    )


# Each pattern's words (or a digit) are what its screen requires (`_screens`, in the same order): a text holding
# none of them skips it.
_BASE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        ("day", r"\b(?:" + "|".join(sorted((re.escape(d) for d in _DAYS), key=len, reverse=True)) + r")\b"),
        ("ago", rf"\b(?P<n>{_COUNT})\s+(?P<unit>{_UNIT})\s+(?:ago|back|earlier)\b"),
        ("ago", rf"\b(?:hace|vor|il y a)\s+(?P<n>{_COUNT})\s+(?P<unit>{_UNIT})\b"),
        ("in", rf"\b(?:in|en|dans)\s+(?P<n>{_COUNT})\s+(?P<unit>{_UNIT})\b(?!\s+(?:ago|of))"),
        ("weekday", rf"\b(?P<rel>{_LAST}|{_THIS}|{_NEXT}|on)\s+(?P<weekday>{_WEEKDAY})\b"),
        ("weekday", rf"\b(?P<weekday>{_WEEKDAY})\s+(?P<rel>pasado|passé|dernier)\b"),
        ("period", rf"\b(?P<rel>{_LAST}|{_THIS}|{_NEXT})\s+(?P<unit>{_UNIT}|{_SEASON})\b"),
        (
            "period",
            rf"\b(?:(?:el|la|le|l')\s*)?(?P<unit>{_UNIT})\s+"
            r"(?P<rel>pasad[oa]|que viene|dernier|dernière|prochain|prochaine)\b",
        ),
        ("earlier", r"\bearlier (?:this|in the) (?P<unit>week|month|year)\b"),
        ("month", rf"\b(?P<rel>{_LAST}|{_THIS}|{_NEXT}|in|en|im)\s+(?P<month>{_MONTH})\b(?!\s*\d)"),
        ("year", r"\b(?:in|en|im|since|en el año|durante)\s+(?P<year>(?:19|20)\d\d)\b"),
        (
            "date",
            rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+|de\s+)?(?:{_MONTH})\.?(?:,?\s+(?:19|20)\d\d)?"
            rf"|(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+(?:19|20)\d\d)?"
            r"|\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./](?:19|20)?\d\d)\b",
        ),
    )
)

# Claims whose truth changes by the minute: not learnings (they are wrong before anyone recalls them).
MOMENTARY = re.compile(
    r"\b(?:right now|at the moment|as we speak|at this (?:very )?moment|this very moment|this minute|"
    r"(?:i'?m|i am|we'?re|we are) (?:currently |just )?(?:in a meeting|on a call|on the phone|driving|in the car|"
    r"on my way|in traffic|busy right now)|ahora mismo|en este momento|gerade jetzt|im moment|in diesem moment|"
    r"en ce moment|à l'instant|in questo momento|agora mesmo|neste momento)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TimeSpan:
    """When a statement's event happened: [start, end) in UTC, how finely, and the words that said it."""

    start: datetime
    end: datetime
    granularity: str  # "day", "week", "weekend", "month", "quarter", "season", "year"
    expression: str

    def overlaps(self, other: TimeSpan) -> bool:
        return self.start < other.end and other.start < self.end


def momentary(text: str) -> str | None:
    """The words that make a claim momentary ("right now", "I'm in a meeting"), or None."""
    match = MOMENTARY.search(text)
    return None if match is None else match.group(0)


@dataclass(frozen=True)
class _Found:
    kind: str
    match: re.Match[str]


def find_expression(text: str) -> re.Match[str] | None:
    """The first time expression in `text` (the one a span is resolved from), or None."""
    found = _first(text)
    return None if found is None else found.match


def _first(text: str) -> _Found | None:
    words = TextWords.of(text)
    if not _any_screen()(words):
        return None
    best: _Found | None = None
    for (kind, pattern), screen in zip(_patterns(), _screens(), strict=True):
        if not screen.may_match(words):
            continue
        match = pattern.search(text)
        if match is not None and (best is None or match.start() < best.match.start()):
            best = _Found(kind, match)
    return best


def _first_of_patterns(text: str) -> _Found | None:
    """`_first` without the screens (what they must never change)."""
    best: _Found | None = None
    for kind, pattern in _patterns():
        match = pattern.search(text)
        if match is not None and (best is None or match.start() < best.match.start()):
            best = _Found(kind, match)
    return best


def _count(raw: str) -> int:
    raw = raw.casefold()
    if raw.isdigit():
        return int(raw)
    if raw in ("a", "an", "un", "una", "uno", "une", "ein", "einem", "einer"):
        return 1
    if raw in ("a couple of",):
        return 2
    if raw in ("a few", "few", "several"):
        return 3
    return int(_NUMBER_WORDS.get(raw, 1))


def _day(d: date) -> tuple[datetime, datetime]:
    start = datetime.combine(d, time(), UTC)
    return start, start + timedelta(days=1)


def _month_span(year: int, month: int, months: int = 1) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    total = year * 12 + month - 1 + months
    return start, datetime(total // 12, total % 12 + 1, 1, tzinfo=UTC)


def _shift_months(d: date, months: int) -> date:
    total = d.year * 12 + d.month - 1 + months
    year, month = total // 12, total % 12 + 1
    return date(year, month, min(d.day, calendar.monthrange(year, month)[1]))


def _direction(rel: str) -> int:
    rel = rel.casefold()
    if re.fullmatch(_LAST, rel, re.IGNORECASE):
        return -1
    if re.fullmatch(_NEXT, rel, re.IGNORECASE):
        return 1
    return 0


def _season(unit: str, shift: int, anchor: date) -> tuple[datetime, datetime, str]:
    """ "last summer": the latest one over before `anchor`; "this summer": the one of the anchor's season year
    (under way, or still to come); "next summer": the first one starting after it."""
    first, last = _SEASONS[unit]
    months = (last - first) % 12 + 1

    def occurrence(year: int) -> tuple[datetime, datetime]:
        return _month_span(year, first, months)

    today = datetime.combine(anchor, time(), UTC)
    year = anchor.year - (1 if first > last and anchor.month <= last else 0)  # a winter began last December
    start, end = occurrence(year)
    if shift < 0:
        while end > today:
            year -= 1
            start, end = occurrence(year)
    elif shift > 0:
        while start <= today:
            year += 1
            start, end = occurrence(year)
    return start, end, "season"


def _period(unit: str, shift: int, anchor: date) -> tuple[datetime, datetime, str]:
    if unit in _SEASONS:
        return _season(unit, shift, anchor)
    if unit == "week":
        monday = anchor - timedelta(days=anchor.weekday()) + timedelta(weeks=shift)
        return _day(monday)[0], _day(monday + timedelta(days=7))[0], "week"
    if unit == "weekend":
        saturday = anchor - timedelta(days=anchor.weekday()) + timedelta(days=5) + timedelta(weeks=shift)
        if shift == -1 and anchor.weekday() >= 5:  # said on a weekend, "last weekend" is the one before
            saturday -= timedelta(weeks=0)
        return _day(saturday)[0], _day(saturday + timedelta(days=2))[0], "weekend"
    if unit == "month":
        d = _shift_months(anchor, shift)
        start, end = _month_span(d.year, d.month)
        return start, end, "month"
    if unit == "quarter":
        q = (anchor.month - 1) // 3 + shift
        year, q = anchor.year + q // 4, q % 4
        start, end = _month_span(year, q * 3 + 1, 3)
        return start, end, "quarter"
    if unit == "fortnight":
        monday = anchor - timedelta(days=anchor.weekday()) + timedelta(weeks=2 * shift)
        return _day(monday)[0], _day(monday + timedelta(days=14))[0], "week"
    year = anchor.year + shift
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC), "year"


def _unit_of(raw: str) -> str:
    return _UNITS.get(raw.casefold(), _UNITS.get(raw.casefold().rstrip("s"), raw.casefold()))


def resolve(text: str, anchor: datetime) -> TimeSpan | None:
    """The span the first time expression of `text` stands for, said at `anchor`; None when there is none or
    it cannot be resolved."""
    found = _first(text)
    if found is None:
        return None
    match, kind = found.match, found.kind
    words = match.group(0)
    day = anchor.astimezone(UTC).date()
    try:
        span = _resolve(kind, match, day)
    except (ValueError, OverflowError):
        return None
    if span is None:
        return None
    start, end, granularity = span
    return TimeSpan(start, end, granularity, words)


def _resolve(kind: str, match: re.Match[str], day: date) -> tuple[datetime, datetime, str] | None:
    groups = match.groupdict()
    if kind == "day":
        return (*_day(day + timedelta(days=_DAYS[match.group(0).casefold()])), "day")
    if kind in ("ago", "in"):
        n = _count(groups["n"]) * (-1 if kind == "ago" else 1)
        unit = _unit_of(groups["unit"])
        if unit == "day":
            return (*_day(day + timedelta(days=n)), "day")
        if unit in ("week", "fortnight"):
            moved = day + timedelta(weeks=n * (2 if unit == "fortnight" else 1))
            return (*_day(moved), "day")
        if unit == "month":
            return (*_day(_shift_months(day, n)), "day")
        if unit == "quarter":
            return (*_day(_shift_months(day, 3 * n)), "day")
        if unit == "year":
            return (*_day(_shift_months(day, 12 * n)), "day")
        return None
    if kind == "weekday":
        target = _WEEKDAYS[groups["weekday"].casefold()]
        rel = groups["rel"].casefold()
        direction = _direction(rel) if rel != "on" else -1
        if rel in ("pasado", "passé", "dernier"):
            direction = -1
        delta = (target - day.weekday()) % 7
        if direction < 0:
            delta = delta - 7 if delta > 0 else -7
        elif direction > 0 and delta == 0:
            delta = 7
        return (*_day(day + timedelta(days=delta)), "day")
    if kind == "period":
        unit = _unit_of(groups["unit"])
        rel = groups["rel"].casefold()
        shift = _direction(rel) or (-1 if rel in ("pasado", "pasada", "dernier", "dernière") else 0)
        if rel in ("que viene", "prochain", "prochaine"):
            shift = 1
        return _period(unit, shift, day)
    if kind == "earlier":
        start, _, granularity = _period(groups["unit"].casefold(), 0, day)
        return start, _day(day)[1], granularity
    if kind == "month":
        month = _month_number(groups["month"])
        rel = groups["rel"]
        direction = _direction(rel)
        year = day.year
        if direction < 0:
            year -= 1 if month >= day.month else 0
        elif direction > 0:
            year += 1 if month <= day.month else 0
        elif not re.fullmatch(_THIS, rel, re.IGNORECASE) and month > day.month:
            year -= 1  # "in March", said in May: this year's; said in February: last year's (memories look back)
        return (*_month_span(year, month), "month")
    if kind == "year":
        year = int(groups["year"])
        return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC), "year"
    parsed = _parse_date(match.group(0), day)
    return None if parsed is None else (*_day(parsed), "day")


@functools.lru_cache(maxsize=256)
def _parse_date(words: str, day: date) -> date | None:
    """An explicit date, read by dateparser in any language it knows (the most recent past one when the year
    is left out)."""
    import dateparser

    settings: dict[str, Any] = {
        "RELATIVE_BASE": datetime.combine(day, time()),
        "PREFER_DATES_FROM": "past",
        "DATE_ORDER": "DMY",
    }
    parsed = dateparser.parse(words, languages=["en", "es", "de", "fr", *_MORE_LANGUAGES], settings=settings)
    return None if parsed is None else parsed.date()


def stored_span(start: datetime, end: datetime, expression: str = "") -> TimeSpan:
    """A span from stored bounds, its granularity read from its length."""
    days = round((end - start).total_seconds() / 86_400)
    granularity = {1: "day", 2: "weekend", 7: "week", 14: "week"}.get(days)
    if granularity is None:
        granularity = (
            "month"
            if 28 <= days <= 31
            else "quarter"
            if 89 <= days <= 92
            else "year"
            if days in (365, 366)
            else "season"
        )
    return TimeSpan(start, end, granularity, expression)


def dated(text: str, start: datetime | None, end: datetime | None) -> str:
    """`text` with the resolved date after its time expression: "… yesterday (7 May 2023)"."""
    if start is None or end is None:
        return text
    match = find_expression(text)
    if match is None:
        return text
    shown = render_span(stored_span(start, end))
    if shown.casefold() in match.group(0).casefold():
        return text  # "on 3 May 2023" needs no "(3 May 2023)"
    return f"{text[: match.end()]} ({shown}){text[match.end() :]}"


def render_span(span: TimeSpan) -> str:
    """How the block shows a resolved span: "7 May 2023", "week of 1 May 2023", "April 2023", "Q1 2023"."""
    start = span.start
    if span.granularity == "day":
        return f"{start.day} {start:%B %Y}"
    if span.granularity in ("week", "weekend"):
        return f"{span.granularity} of {start.day} {start:%B %Y}"
    if span.granularity == "month":
        return f"{start:%B %Y}"
    if span.granularity == "quarter":
        return f"Q{(start.month - 1) // 3 + 1} {start.year}"
    if span.granularity == "season":
        last = span.end - timedelta(days=1)
        return f"{start:%B %Y}–{last:%B %Y}"
    return str(start.year)
