"""Times of day written after a number: "17:00", "3 pm", "9:30am", "18 Uhr", "오후 4시", "午後3時", "下午3点".

`quantities` asks here first; a clock time is a value in minutes after midnight, compared like any other.
"""

from __future__ import annotations

import re

__all__ = ["clock_time", "spoken_times"]


def clock_time(text: str, start: int, end: int, value: float) -> tuple[float, int] | None:
    """The number at `start`..`end` (worth `value`) read as a time of day: minutes after midnight and where the
    time ends, or None."""
    return _day_part(text, start, end, value) or _clock(text, start, end, value) or _cjk_clock(text, start, end, value)


# An hour with the part of the day after it, as the languages that use no "pm" write it: "8 de la tarde",
# "8 da noite", "8 heures du soir", "3 del pomeriggio", "8 Uhr abends", "8 uur 's avonds"; with its half or
# quarter when said ("sei e mezza di sera", "ocho y media", "huit heures et demie du soir", "oito e meia").
_AFTERNOON_WORDS = (
    "tarde|noche|noite|soir|après-midi|apres-midi|sera|pomeriggio|notte|abends|nachmittags|avonds|middags"
)
_DAY_PART = re.compile(
    r"\s(?:(?:horas?|heures?|h|uhr|uur|ore)\s)?"
    r"(?:(?:e|y|et)\s(?P<past>mezza|mezzo|media|meia|demie|demi|un quarto|cuarto|un quart|quart)(?![\w])\s?)?"
    r"(?:(?:(?:de la|de|da|du|de l'|di|del|della|dela|do|des)\s?|'s\s|)"
    rf"(?P<part>{_AFTERNOON_WORDS}|mañana|manana|madrugada|manhã|manha|matin|mattina|morgens|vormittags|früh"
    r"|ochtends)(?![\w]))?",
    re.IGNORECASE,
)
_AFTERNOON = re.compile(rf"^(?:{_AFTERNOON_WORDS})$", re.IGNORECASE)
_PAST = {"mezza": 30, "mezzo": 30, "media": 30, "meia": 30, "demie": 30, "demi": 30}


# "alle sei e mezza" is half past six; "3 e mezzo chili" is three and a half kilos.
_AT = re.compile(r"(?:\balle|\ba las|\ba la|\bàs|\bà|\bas|\bum|\bat)\s(?:ore\s)?$", re.IGNORECASE)


def _day_part(text: str, start: int, end: int, value: float) -> tuple[float, int] | None:
    match = _DAY_PART.match(text, end)
    if match is None or not (match.group("part") or match.group("past")):
        return None
    if not match.group("part") and not _AT.search(text[max(0, start - 12) : start]):
        return None
    if value != int(value) or not 0 <= value <= 12:
        return None
    afternoon = match.group("part") is not None and _AFTERNOON.match(match.group("part")) is not None
    minutes = _PAST.get((match.group("past") or "").casefold(), 15 if match.group("past") else 0)
    return float((int(value) % 12 + 12 * afternoon) * 60 + minutes), match.end()


_CLOCK = re.compile(
    r":(\d\d)(?::\d\d)?\s?(a\.?m\.?|p\.?m\.?|h|uhr)?(?![0-9A-Za-z])|\s?(a\.?m\.?|p\.?m\.?|uhr|h00)(?![\w])", re.I
)


def _clock(text: str, start: int, end: int, value: float) -> tuple[float, int] | None:
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


# The hour of a clock in Korean and Japanese ("오후 4시", "午後3時"), with its minutes if written ("9시 30분").
_CJK_CLOCK = re.compile(
    r"\s?(?:시(?!간)|時(?!間)|(?<=[0-9])[点點](?=[钟鐘半\d]|[^\w]|[\u3400-\u9fff]))(?:\s?(\d{1,2})\s?[분分])?"
)
_CJK_AFTERNOON = re.compile(r"(?:오후|午後|下午|晚上)\s?$")
# Chinese "3点" is three o'clock only with a part of the day before it (in Japanese 点 counts points).
_CHINESE_DAYTIME = re.compile(r"(?:上午|下午|早上|晚上|凌晨|中午|每天)\s?$")


def _cjk_clock(text: str, start: int, end: int, value: float) -> tuple[float, int] | None:
    """A Korean or Japanese hour of the day ("오후 4시", "9시 30분", "午後3時") as minutes after midnight."""
    match = _CJK_CLOCK.match(text, end)
    if match is None or value != int(value) or not 0 <= value <= 24:
        return None
    if match.group(0).strip()[:1] in "点點" and not _CHINESE_DAYTIME.search(text[max(0, start - 4) : start]):
        return None
    afternoon = bool(_CJK_AFTERNOON.search(text[max(0, start - 4) : start])) and value < 12
    return float((int(value) + 12 * afternoon) * 60 + int(match.group(1) or 0)), match.end()


# Times of day said in English words: "half past nine", "a quarter to eight", "seven o'clock", "six in the morning".
_HOURS = {
    word: number
    for number, word in enumerate("twelve one two three four five six seven eight nine ten eleven twelve".split())
    if number or word == "twelve"
} | {"twelve": 12, "noon": 12, "midnight": 0}
_HOUR = r"(?P<hour>\d{1,2}|" + "|".join(sorted(_HOURS, key=len, reverse=True)) + ")"
_SPOKEN = re.compile(
    r"(?<![\w-])(?:(?P<part>half|(?:a\s)?quarter|ten|twenty|five|twenty-five)\s(?P<side>past|after|to)\s"
    + _HOUR
    + r"|"
    + _HOUR.replace("hour", "whole")
    + r"(?:\so'clock|(?=\s(?:in the (?:morning|afternoon|evening)|at night)))"
    + r")(?:\s(?P<when>in the (?:morning|afternoon|evening)|at night|a\.?m\.?|p\.?m\.?))?(?![\w'])",
    re.IGNORECASE,
)
_PART_MINUTES = {"half": 30, "quarter": 15, "a quarter": 15, "ten": 10, "twenty": 20, "five": 5, "twenty-five": 25}


def spoken_times(text: str) -> list[tuple[float, int, int]]:
    """Times of day written in English words, as (minutes after midnight, start, end)."""
    found = []
    for match in _SPOKEN.finditer(text):
        raw = match.group("hour") or match.group("whole")
        hour = int(raw) if raw.isdigit() else _HOURS[raw.casefold()]
        if not 0 <= hour <= 24:
            continue
        minutes = 0
        if match.group("part"):
            minutes = _PART_MINUTES[" ".join(match.group("part").casefold().split())]
            if match.group("side").casefold() == "to":
                hour, minutes = (hour - 1) % 24, 60 - minutes
        when = (match.group("when") or "").casefold().replace(".", "")
        if when in ("in the afternoon", "in the evening", "pm") or (when == "at night" and 6 <= hour < 12):
            hour = hour % 12 + 12
        elif when in ("in the morning", "am"):
            hour %= 12
        found.append((float(hour * 60 + minutes), match.start(), match.end()))
    return found
