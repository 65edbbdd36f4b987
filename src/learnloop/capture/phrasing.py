"""Text helpers for the rule observer: sentences, person rewriting, measured values and the assistant's claims.

Rules turn a user's first-person sentence into a reusable third-person statement. The subject of the sentence
becomes "User" with a conjugated verb ("we use X" → "User uses X"); first-person words later in the clause
become "they"/"the user's", which needs no verb agreement ("when I mash" → "when they mash"); second person is
the assistant. Numbers and units are never rewritten.

The assistant's message is read only for *claims* — "subject … value" pairs such as "a typical boil-off rate
of 4 L/hr" — so that "No, it's 3.5 L/hr" can say what "it" was and what the assistant had predicted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..terms import STOPWORDS

__all__ = [
    "GERUND_VERBS",
    "PRONOUN_HEADS",
    "UNITS",
    "VALUE",
    "Claim",
    "Value",
    "capitalize",
    "find_claims",
    "gerund_object",
    "is_specific",
    "normalize",
    "parse_values",
    "sentences",
    "third_person",
    "user_clause",
]

#: Unit spellings a value may carry, longest first inside the regex. Extend for new domains.
UNITS: tuple[str, ...] = (
    "L/hr", "l/hr", "L/h", "l/h", "°C", "°F", "ºC", "°P", "%", "C", "F", "L", "l", "ml", "mL", "gal", "gallons",
    "qt", "kg", "g", "oz", "lbs", "lb", "psi", "bar", "ppm", "IBUs", "IBU", "EBC", "SRM", "ABV", "Brix", "SG",
    "days", "day", "hours", "hour", "hrs", "hr", "h", "minutes", "minute", "mins", "min", "seconds", "second",
    "secs", "sec", "ms", "s", "weeks", "week", "months", "GB", "MB", "KB", "TB", "GiB", "MiB", "rows", "req/s",
    "rps", "qps", "k", "K", "x", "points", "pts", "USD", "EUR", "users", "orders", "tokens", "cores", "volumes",
)  # fmt: skip
_UNIT_ALIASES = {
    "l/hr": "l/h", "ºc": "°c", "c": "°c", "f": "°f", "day": "days", "hour": "h", "hours": "h", "hrs": "h",
    "hr": "h", "minute": "min", "minutes": "min", "mins": "min", "second": "s", "seconds": "s", "secs": "s",
    "sec": "s", "week": "weeks", "gallons": "gal", "lbs": "lb", "ibus": "ibu", "pts": "points",
}  # fmt: skip
_UNIT_ALT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
#: A number with an optional currency sign, approximation mark, range and unit: "~3.5 L/hr", "1.042", "82%".
VALUE = rf"(?:[$€£]\s?)?[~≈]?\d+(?:[.,]\d+)*(?:\s?[-–]\s?\d+(?:[.,]\d+)*)?(?:\s?(?:{_UNIT_ALT})(?![\w/]))?"
_VALUE = re.compile(rf"(?<![\w.]){VALUE}")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")

#: Bare verbs written as gerunds after "prefer": "I prefer mash at 66 C" → "prefers mashing at 66 C".
GERUND_VERBS = frozenset(
    "mash sparge boil ferment pitch brew bottle keg chill dry-hop whirlpool cold-crash use run write keep deploy "
    "test build store cache batch".split()
)
_GERUND_NEXT = frozenset("at with for in on to by before after until from under over around about".split())
#: Heads that make a phrase refer to something only the conversation knows ("that", "it") — never reusable.
PRONOUN_HEADS = frozenset(
    "it its it's that this these those them they he she him her his you your yours what how when why where "
    "which who whatever everything something anything nothing one ones there here so".split()
)

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\s*\n+\s*")
_SPACE = re.compile(r"\s+")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": " - "})
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_QUOTED_LINE = re.compile(r"^\s*>.*$", re.MULTILINE)

_OBJECT_PRONOUNS = {
    "i": "they", "me": "them", "my": "the user's", "mine": "the user's", "myself": "themselves",
    "i'm": "they're", "i've": "they've", "i'd": "they'd", "i'll": "they'll", "we": "they", "us": "them",
    "our": "the user's", "ours": "the user's", "ourselves": "themselves", "we're": "they're",
    "we've": "they've", "we'd": "they'd", "we'll": "they'll", "you": "the assistant",
    "your": "the assistant's", "yours": "the assistant's", "you're": "the assistant is",
    "you've": "the assistant has", "you'd": "the assistant would", "yourself": "itself",
}  # fmt: skip
_PRONOUN_WORD = re.compile(r"(?<![\w'])(" + "|".join(sorted(_OBJECT_PRONOUNS, key=len, reverse=True)) + r")(?![\w'])",
                           re.IGNORECASE)  # fmt: skip
_ADVERBS = (
    r"(?:also|currently|now|actually|only|mostly|usually|always|generally|typically|still|just|really|normally|never)"
)
_SUBJECT = re.compile(
    rf"^(?:I|we)(?P<aux>'m|'re|'ve|'d|'ll| am| are| have| had| do not| don't| did not| didn't| can't| cannot)?"
    rf"(?P<adv>(?:\s+{_ADVERBS})*)\s+(?P<verb>[a-z][\w-]*)(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_AUX = {
    "'m": "is", "am": "is", "'re": "is", "are": "is", "'ve": "has", "have": "has", "had": "had", "'d": "would",
    "'ll": "will", "do not": "does not", "don't": "does not", "did not": "did not", "didn't": "did not",
    "can't": "cannot", "cannot": "cannot",
}  # fmt: skip
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "am": "is", "are": "is", "'m": "is", "was": "was",
              "were": "was", "be": "is"}  # fmt: skip
_UNCHANGED = frozenset("can could will would should must might may shall did had was used".split())


def normalize(text: str) -> str:
    """Typographic quotes and dashes to ASCII; code fences and quoted lines ("> …") removed.

    Pasted code and quoted text are someone else's words (often the assistant's own answer quoted back).
    """
    text = text.translate(_QUOTES)
    if "```" in text:
        text = _FENCE.sub(" ", text)
    if ">" in text:
        text = _QUOTED_LINE.sub(" ", text)
    return text


def sentences(text: str) -> Iterator[str]:
    for part in _SENTENCE.split(text):
        part = _SPACE.sub(" ", part).strip()
        if part:
            yield part


def capitalize(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def third_person(text: str) -> str:
    """First person → they / the user's, second person → the assistant, anywhere in a clause."""

    def swap(match: re.Match[str]) -> str:
        return _OBJECT_PRONOUNS[match.group(1).casefold()]

    return _PRONOUN_WORD.sub(swap, text)


def _conjugate(verb: str) -> str:
    low = verb.casefold()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _UNCHANGED or (low.endswith(("ed", "s")) and not low.endswith(("ss", "us"))):
        return verb  # past tense or already third person
    if low.endswith(("sh", "ch", "x", "z", "ss", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def user_clause(clause: str) -> str | None:
    """ "we use X" → "User uses X", "I'm on Y" → "User is on Y"; None unless the clause opens with I / we."""
    match = _SUBJECT.match(clause)
    if match is None:
        return None
    aux = (match.group("aux") or "").strip().casefold()
    adverbs = match.group("adv").strip()
    verb, rest = match.group("verb"), third_person(match.group("rest"))
    if aux:
        words = [_AUX.get(aux, aux), adverbs, verb]
    else:
        words = [adverbs, _conjugate(verb)]
    return "User " + " ".join(w for w in words if w) + rest


def gerund_object(obj: str) -> str:
    """ "mash at 66 C" → "mashing at 66 C" (only for `GERUND_VERBS` followed by a preposition or a number)."""
    words = obj.split(" ", 2)
    verb = words[0].casefold()
    if verb not in GERUND_VERBS:
        return obj
    if len(words) > 1 and words[1].casefold() not in _GERUND_NEXT and not words[1][:1].isdigit():
        return obj
    if verb.endswith("e") and not verb.endswith("ee"):
        stem = verb[:-1]
    elif verb in ("run", "set", "get", "put", "stop", "plan"):
        stem = verb + verb[-1]
    else:
        stem = verb
    return " ".join([stem + "ing", *words[1:]])


def is_specific(text: str) -> bool:
    """Names something checkable: a number, a proper noun or acronym, or a code-like token."""
    if any(ch.isdigit() for ch in text) or "`" in text:
        return True
    for word in text.split():
        core = word.strip(".,;:!()\"'")
        if len(core) > 1 and core != "I" and (core[0].isupper() or any(c in core for c in "_/:")):
            return True
        if _CODEISH.search(core):
            return True
    return False


_CODEISH = re.compile(r"[a-z][A-Z]|\w\.\w")  # camelCase, dotted.names


@dataclass(frozen=True)
class Value:
    text: str
    number: float | None
    unit: str

    def compatible(self, other: Value) -> bool:
        if self.unit and other.unit:
            return self.unit == other.unit
        # One side without a unit ("1,180 orders" vs "1,240"): the numbers must at least look alike — both
        # decimals (gravities 1.042 / 1.050) or both integers. Two units must be the same unit.
        return _decimal(self.text) == _decimal(other.text)


def _decimal(text: str) -> bool:
    number = _NUMBER.search(text)
    return number is not None and "." in number.group(0)


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:  # "192.168.1.50", "1.2.3": a version or an address, not a quantity
        return None


def parse_values(text: str) -> list[Value]:
    found = []
    for match in _VALUE.finditer(text):
        raw = match.group(0).strip()
        number = _NUMBER.search(raw)
        unit = raw[number.end() :].strip().casefold() if number else ""
        unit = unit.lstrip("-– 0123456789.,").strip() if unit[:1] in "-–" else unit
        value = _number(number.group(0)) if number else None
        found.append(Value(raw, value, _UNIT_ALIASES.get(unit, unit)))
    return found


@dataclass(frozen=True)
class Claim:
    subject: str
    value: Value


_CLAIM_VERB = (
    r"(?:is|are|was|were|of|at|around|about|should be|will be|would be|to be|takes?|should take|will take|"
    r"would take|needs?|expect|lands? at|comes? in at|finish(?:es)? at|ends? up at|reach(?:es)?|hits?|=|:)"
)
_CLAIM = re.compile(
    rf"(?P<subj>[A-Za-z][\w/'-]*(?:\s+[A-Za-z][\w/'-]*){{0,5}}?)\s+{_CLAIM_VERB}\s+"
    rf"(?:(?:about|around|roughly|approximately|approx\.?|typically|usually|normally|only|just|likely|probably|"
    rf"an?)\s+){{0,3}}(?P<val>{VALUE})"
)
_VALUE_THEN_NOUN = re.compile(rf"(?P<val>{VALUE})\s+(?P<subj>[a-z][\w-]{{3,}}(?:\s+[a-z][\w-]{{3,}})?)")
#: Words that end a claim's subject when reading it backwards ("with a typical boil-off rate" → "boil-off rate").
_SUBJECT_BREAK = STOPWORDS | frozenset(
    "typical typically expected estimated predicted assumed standard default average usual normal assuming using "
    "based expect estimate roughly approximately around about so since need you'll you'd get gets should "
    "will would usually normally likely probably just only".split()
)


_MODALS = frozenset("should will would could can may might must typically usually normally generally".split())


def _claim_subject(raw: str) -> str:
    words = raw.split()
    while words and words[-1].casefold() in _MODALS:  # "your FG should [land at]" → "your FG"
        words.pop()
    kept: list[str] = []
    for word in reversed(words):
        if word.casefold() in _SUBJECT_BREAK or len(kept) == 4:
            break
        kept.append(word)
    return " ".join(reversed(kept))


def find_claims(text: str) -> list[Claim]:
    """Subject–value pairs the assistant stated, in order: "boil-off rate of 4 L/hr" → (boil-off rate, 4 L/hr)."""
    claims: list[Claim] = []
    for match in _CLAIM.finditer(text):
        subject = _claim_subject(match.group("subj"))
        values = parse_values(match.group("val"))
        if subject and values:
            claims.append(Claim(subject, values[0]))
    for match in _VALUE_THEN_NOUN.finditer(text):  # "about 75% attenuation"
        words = match.group("subj").split()
        noun = words[0] if words[-1].casefold() in _SUBJECT_BREAK else " ".join(words)
        values = parse_values(match.group("val"))
        # A unit, or a counted plural ("250 sessions"), makes the number a claim about that noun.
        counted = noun.casefold().endswith("s") and " " not in noun
        if noun.casefold() not in _SUBJECT_BREAK and values and (values[0].unit or counted):
            claims.append(Claim(noun, values[0]))
    return claims
