"""What two learnings' words say about whether they are one fact: subject, attribute, value, correction.

Embeddings see topics, not subjects: "Goran Sato is vegetarian" and "Goran Kowalski is vegetarian" are
near neighbours for any model, and so are "Kettle A boils off 2 L/hr" and "Kettle B … 3 L/hr". Dedupe
therefore asks the words. Both texts are split into tokens and aligned (difflib); every region where they
differ is classified:

* **marker** — a name (a capitalised word), an instance label ("Gen 1", "P3", "v14", a lone "A"/"B"),
  an environment or platform ("staging", "iOS"), a relation ("partner", "daughter") or a date: what
  tells two subjects or two records apart;
* **value** — numbers (compared as quantities with units: `quantities`);
* **word** — other content words (a paraphrase, or a non-numeric value such as "oat" → "almond");
* function words and punctuation, which never count.

A marker region followed by shared content ("*Goran Sato* is vegetarian") is in the subject's position
and means two subjects. A marker region at the end, after everything the texts share ("The user uses
*Postgres*" → "… *MySQL*"), is in the value's position: a changed value, if the new text says so.
Relations, environments and dates count even when only one text has them: "the user's resting heart rate"
and "the user's partner's resting heart rate" are two people.

Correction language ("actually", "no longer", "switched from X to Y", "instead of", "quit") is read in
English, Spanish, German, French, Italian, Portuguese, Dutch, Japanese and Korean.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from ..terms import STOPWORDS, stem
from .acronyms import acronyms_aligned
from .lexicon import (
    CJK_RELATIONS,
    COMMON_STARTS,
    CONTRAST,
    CORRECTION,
    COUNTERPARTS,
    DATE_TOKEN,
    ENVIRONMENTS,
    HEDGES,
    LIGHT_VERBS,
    MONTHS,
    NEGATION,
    OPPOSITES,
    PERIODS,
    POSITIONS,
    RELATIONS,
    RELATIVE_DAYS,
    RELATIVE_FORMS,
    RETRACTED_SUBJECT,
    RETRACTION,
    WEAK_CORRECTION,
    WEEKDAYS,
    is_german,
)
from .naming import change_names, digits, named, topic_swap
from .quantities import Quantity, counts_after, quantities
from .records import speaker

__all__ = [
    "GENERIC",
    "STRUCTURED",
    "Comparison",
    "Region",
    "RegionKind",
    "TextProfile",
    "compare",
    "names_swapped",
    "profile",
]

# Japanese and Chinese have no spaces: each character is a token there (Korean separates its words).
_TOKEN = re.compile(
    r"\d{1,2}:\d\d(?!\d)|[\u3040-\u30ff\u3400-\u9fff]|\d+(?:[.,]\d+)*(?![^\W_])|(?:[^\W\d_\u3040-\u30ff\u3400-\u9fff]|\d)+(?:[-'’.]"
    r"(?:[^\W_\u3040-\u30ff\u3400-\u9fff])+)*|[#%$€£¥]",
    re.UNICODE,
)
# Korean particles ride on the noun ("동생은", "민준이의"): the noun is what names a subject.
_HANGUL_PARTICLE = re.compile(r"(?<=[\uac00-\ud7af])(?:에서|으로|이는|이의|은|는|이|가|을|를|의|에|로|와|과|도|만)$")
_HIRAGANA = re.compile(r"[\u3040-\u309f]+")  # particles and endings: the function words of Japanese
_CJK_DATE_UNITS = frozenset("年月日년월일")
_RETRACTION_STOP = re.compile(
    r"\s(?:to|with|for|as|and|in favou?r of|by|because|after|since|but|a|à|por|para|zu|auf|durch|mit|pour|par|"
    r"con|per|com|naar|met|y|und|et|e|en)\s",
    re.IGNORECASE,
)
_CJK_RETRACTION = re.compile(r"(?P<object>[^、。\s]{1,20}?)(?:から|에서)[^、。\s]{1,20}?(?:に|로|으로)")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")

# Words nearly every learning shares: they say nothing about whether two are one fact.
GENERIC = frozenset(
    stem(w) for w in "user users team customer customers client clients store company person people".split()
)

# Above this token alignment the texts are the same sentence with parts swapped, and where a part sits says
# what it is (subject before the shared words, value after them); below it they are reworded.
STRUCTURED = 0.6


_RELATIVE = frozenset("following next previous".split())
_SELF = frozenset("i me my mine myself i'm user users".split())
_RATE_WORDS = frozenset("per pro por je".split())


class RegionKind(StrEnum):
    MARKER = "marker"
    VALUE = "value"
    WORD = "word"


@dataclass(frozen=True)
class _Token:
    surface: str
    folded: str
    kind: str  # "marker", "number", "content", "function"
    start: int


@dataclass(frozen=True, eq=False)
class TextProfile:
    """One text, read once for every comparison it takes part in."""

    text: str
    tokens: tuple[_Token, ...]
    content: frozenset[str]
    names: frozenset[str]
    relations: frozenset[str]
    environments: frozenset[str]
    dates: frozenset[str]
    quantities: tuple[Quantity, ...]
    correction: tuple[str, ...]
    negated: bool
    cjk: bool
    retracted: frozenset[str] = frozenset()  # content stems and names the text says are no longer so
    contrasted: frozenset[str] = frozenset()  # what it sets against something else ("over X", "rather than X")

    @property
    def markers(self) -> frozenset[str]:
        return self.names | self.relations | self.environments | self.dates

    @functools.cached_property
    def unit_words(self) -> frozenset[str]:
        """The stems of the words its values are given in ("hours", "dollars", "Kilometer")."""
        return frozenset(stem(word) for q in self.quantities for word in re.findall(r"[^\W\d_]+", q.unit.casefold()))

    @functools.cached_property
    def terms(self) -> frozenset[str]:
        """Content stems and names alike: "Docker Buildx" and "docker buildx" are the same words."""
        return self.content | {stem(n) for n in self.names if not n.startswith(("#", "@"))}


_COMMON_SUFFIX = re.compile(r"(?:ing|ed|ly|tion|ness|ment|ies|es)$")


def _is_month(tokens: list[str], index: int) -> bool:
    """ "March revenue", "3 May", "Jan 2024" — but not "Jan Khan", "May Lee" or "you may": a month name is a
    date beside a number, or spelled out and not followed by another name."""
    word, nxt = tokens[index], tokens[index + 1] if index + 1 < len(tokens) else ""
    prev = tokens[index - 1] if index > 0 else ""
    if nxt[:1].isdigit() or prev[:1].isdigit():
        return True
    if nxt[:1].isupper() or not word[:1].isupper():
        return False
    return len(word) > 3 and word.casefold() not in ("may", "march", "june")


def _is_name(tokens: list[str], index: int, sentence_start: bool) -> bool:
    """A capitalised word inside a sentence, an alphanumeric code ("P1", "v14", "RTX4090"), or a
    capitalised first word that is not an ordinary one ("Alice prefers…" yes, "Bottling is…" no)."""
    word = tokens[index]
    if not word[:1].isupper():
        return bool(re.fullmatch(r"[a-z]+\d+[a-z\d]*|\d+[a-z]+\d*", word)) and not DATE_TOKEN.match(word.lower())
    folded = word.casefold()
    if word == "I" or (folded in STOPWORDS and not (len(word) == 1 and not sentence_start)):
        return False
    if not sentence_start:
        return True
    nxt = tokens[index + 1] if index + 1 < len(tokens) else ""
    if nxt[:1].isupper() or folded.endswith("'s") or folded.endswith("’s"):
        return True
    return folded not in COMMON_STARTS and not _COMMON_SUFFIX.search(folded) and not CORRECTION.fullmatch(folded)


def _content_stems(word: str, dates: set[str]) -> list[str]:
    """A word's content stems; a hyphenated compound is its parts ("point-of-sale" is "point of sale",
    "Sunday-night" a weekday and "night"), so a text that spells it apart says the same words."""
    parts = word.split("-")
    # "co-host" is not a host, "e-mail" not mail, "check-in" not "check-out": only compounds of two or more
    # whole words come apart.
    whole = [part for part in parts if part not in STOPWORDS]
    if len(whole) < 2 or not all(part.isalpha() and (len(part) > 2 or part in STOPWORDS) for part in parts):
        return [stem(word)]
    stems = []
    for part in parts:
        if part in WEEKDAYS or part in MONTHS:
            dates.add(part[:3])
        elif part not in STOPWORDS:
            stems.append(stem(part))
    return stems


_ROMANCE = frozenset(
    "le la les des du est à au une et pour avec chez dans sur sa ses el los las del es y por con para".split()
)
_ISO_DATE = re.compile(
    r"(?<![\d-])(?P<year>(?:19|20)\d\d)-(?P<month>0[1-9]|1[0-2])-(?P<day>0[1-9]|[12]\d|3[01])(?![\d-])"
)
_MONTH_ABBREVIATIONS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
_CJK_DATE_PART = re.compile(r"(\d{1,4})\s?(年|년|月|월|日|일)")


def _date_part(token: str) -> str:
    """ "2028년", "3月", "5일" as the year, month and day tokens "2028", "mar", "5" that other spellings give."""
    match = _CJK_DATE_PART.fullmatch(token.replace(" ", ""))
    if match is None:
        return token
    number, unit = int(match.group(1)), match.group(2)
    if unit in "月월":
        return _MONTH_ABBREVIATIONS[number - 1] if 1 <= number <= 12 else token
    return str(number)


@functools.lru_cache(maxsize=1024)
def profile(text: str) -> TextProfile:
    matches = list(_TOKEN.finditer(text))
    surfaces = [m.group(0) for m in matches]
    numbers = quantities(text)
    folded_all = [_HANGUL_PARTICLE.sub("", m.group(0).casefold().replace("’", "'").removesuffix("'s")) for m in matches]
    correction_spans = [m.span() for m in CORRECTION.finditer(text)]
    # German capitalises every noun: a capital letter there says nothing about names.
    german = is_german(folded_all)
    # French "son compte" (his account) and Spanish "son" (they are) are no son.
    romance = "son" in folded_all and (
        bool(_ROMANCE & set(folded_all)) or any(w.startswith(("l'", "d'", "qu'")) for w in folded_all)
    )
    tokens: list[_Token] = []
    names: set[str] = set()
    relations: set[str] = set()
    environments: set[str] = set()
    dates: set[str] = set()
    content: set[str] = set()
    sentence_start = True
    # "2025-10-01" is the date "1 October 2025" says: its parts are the same date tokens, not three labels.
    iso_dates = [m.span() for m in _ISO_DATE.finditer(text)]
    for m in _ISO_DATE.finditer(text):
        dates.update((m.group("year"), _MONTH_ABBREVIATIONS[int(m.group("month")) - 1], str(int(m.group("day")))))
    for index, match in enumerate(matches):
        surface = match.group(0)
        base = folded_all[index]
        start = match.start()
        kind = "function"
        if any(a <= start < b for a, b in iso_dates):
            tokens.append(_Token(surface, base, "marker", start))
            sentence_start = False
            continue
        is_digits = base.replace(".", "").replace(",", "").isdigit()
        month = base in MONTHS and _is_month(surfaces, index)
        beside_month = is_digits and (
            any(0 <= j < len(matches) and folded_all[j] in MONTHS for j in (index - 1, index + 1))
            or (index + 1 < len(matches) and folded_all[index + 1] in _CJK_DATE_UNITS)
        )
        within = next((q for q in numbers if q.start <= start < q.end), None)
        if within is not None:
            kind = "number"
            # The noun a number counts ("three coffees") is content too; the number word ("fünf") is not.
            if start > within.start and base.isalpha() and len(base) > 3:
                content.add(stem(base))
        elif any(a <= start < b for a, b in correction_spans):
            kind = "function"  # "actually", "now", "switched": they say a value changed, not what about
        elif base in _RELATIVE and index + 1 < len(matches) and folded_all[index + 1] in WEEKDAYS:
            dates.add(base)  # "the *following* Sunday": another Sunday than the one already said
            kind = "marker"
        elif month or base in WEEKDAYS or beside_month or base in PERIODS:
            dates.add(base[:3] if not is_digits else base)
            kind = "marker"
        elif (
            base in RELATIVE_DAYS
            or DATE_TOKEN.match(base)
            or (base in _CJK_DATE_UNITS and index > 0 and (folded_all[index - 1].isdigit()))
        ):
            dates.add(_date_part(base))
            kind = "marker"
        elif is_digits:  # a number quantities() left out: a label ("Batch #41", "Gen 1")
            names.add(f"#{base}")
            kind = "marker"
        elif base in POSITIONS:
            names.add(f"@{base}")
            kind = "marker"
        elif base in RELATIONS and not (base == "son" and romance):
            base = RELATIVE_FORMS.get(base, base)  # "mum" and "mother" are one person: the same token
            relations.add(base[:-1] if base.endswith("s") and base[:-1] in RELATIONS else base)
            kind = "marker"
        elif base in ENVIRONMENTS and not (base == "us" and surface != "US"):
            environments.add({"prod": "production", "dev": "development", "stage": "staging"}.get(base, base))
            kind = "marker"
        elif "-" in base and (base.split("-")[0] in WEEKDAYS or base.split("-")[0] in MONTHS):
            kind = "marker"  # "Sunday-night", "May-June": a time, however it is capitalised
            content.update(_content_stems(base, dates))
        elif not german and _is_name(surfaces, index, sentence_start):
            names.add(base)
            kind = "marker"
        elif (
            base not in STOPWORDS
            and base not in _RATE_WORDS
            and base not in HEDGES
            and (len(base) > 1 or _CJK.match(base))
            and not _HIRAGANA.fullmatch(base)
        ):
            kind = "content"
            content.update(_content_stems(base, dates))
        tokens.append(_Token(surface, base, kind, start))
        end = match.end()
        sentence_start = text[end : end + 1] in (".", "!", "?", ":", ";") and (
            end + 1 >= len(text) or text[end + 1].isspace()
        )
    if _CJK.search(text):
        relations.update(m.group(0) for m in CJK_RELATIONS.finditer(text))
        for m in _CJK_DATE_PART.finditer(text):  # "2025年3月5日" read digit by digit: one date, as spelled elsewhere
            dates.difference_update((m.group(0), m.group(1), m.group(2)))
            dates.add(_date_part(m.group(0)))
    # A question corrects nothing: "any more paintings coming up?"
    asks = text.rstrip().endswith("?")
    correction = () if asks else tuple(m.group(0).casefold() for m in CORRECTION.finditer(text))
    return TextProfile(
        retracted=_retracted_terms(text),
        contrasted=_object_terms(m.group("object") for m in CONTRAST.finditer(text)),
        text=text,
        tokens=tuple(tokens),
        content=frozenset(content),
        names=frozenset(names),
        relations=frozenset(relations),
        environments=frozenset(environments),
        dates=frozenset(dates),
        quantities=numbers,
        correction=correction,
        negated=bool(NEGATION.search(text)),
        cjk=bool(_CJK.search(text)),
    )


# "The coolant is replaced every 500 hours": a routine, not a replacement of what follows.
_ROUTINE = re.compile(r"\w+\s+(?:every|each|once|twice|daily|weekly|monthly|yearly|annually)\b", re.IGNORECASE)
_NEGATED_VERB = re.compile(r"\b(?:not|never|n't|won't|don't|didn't|gonna not|no)\s+(?:\w+\s+)?$", re.IGNORECASE)


def _retracted_terms(text: str) -> frozenset[str]:
    """Stems, names and numbers of what the text says no longer holds: "switched from *plastic buckets* to…",
    "90 days, not *30*", "*Citra*" in "Mosaic has replaced Citra as…". "I won't quit" retracts nothing."""
    objects = [
        m.group("object")
        for m in RETRACTION.finditer(text)
        if not _NEGATED_VERB.search(text[max(0, m.start() - 24) : m.start()]) and not _ROUTINE.match(text, m.start())
    ]
    objects += [m.group("object") for m in _CJK_RETRACTION.finditer(text)]
    objects += [m.group("object") for m in RETRACTED_SUBJECT.finditer(text)]
    return _object_terms(objects)


def _object_terms(objects: Iterable[str]) -> frozenset[str]:
    """The first few content words of each object phrase, up to a word that ends it ("to", "with", "as")."""
    terms: set[str] = set()
    for obj in objects:
        stop = _RETRACTION_STOP.search(f" {obj} ")
        head = f" {obj} "[: stop.start()] if stop else obj
        words = [t.casefold().removesuffix("'s") for t in _TOKEN.findall(head)]
        for folded in [w for w in words if w not in STOPWORDS][:4]:
            terms.add(folded if folded[:1].isdigit() or _CJK.match(folded) else stem(folded))
    return frozenset(terms)


@dataclass(frozen=True)
class Region:
    """One place where the texts differ: what the old text had there and what the new one has."""

    kind: RegionKind
    old: tuple[str, ...]
    new: tuple[str, ...]
    subject_position: bool  # shared content follows it
    owner_changed: bool = False  # it starts the text, or follows a possessive ("the user's *buddy Tom*")
    # One bare number swapped for another before a value both texts keep ("Study *1* recruited 120
    # participants"): it numbers what the shared value is about.
    numbering: bool = False
    predicate: bool = False  # a shared content word other than a generic one comes before it
    leading: bool = False  # it starts within the old text's first two tokens ("*Aisha* Nowak", "Kettle *A*")

    def describe(self) -> str:
        return f"{' '.join(self.old) or '∅'} → {' '.join(self.new) or '∅'}"


@dataclass(frozen=True)
class Comparison:
    """Everything the words say about a (new, old) pair. `decide` turns it into an action."""

    alignment: float  # difflib ratio of the token sequences (1.0: same tokens in the same order)
    overlap: float  # Jaccard of content stems
    new_only: frozenset[str]  # content stems only the new text has
    old_only: frozenset[str]
    regions: tuple[Region, ...]
    subject: str | None  # why these are two subjects or records, or None
    values: str  # "same", "conflict", "extra", "fewer", "none", "other"
    value_change: str | None  # "3.5 L/hr → 4 L/hr" when values conflict
    correction: tuple[str, ...]  # correction words the new text has and the old one lacks
    negation_flip: bool
    extra_names: frozenset[str] = field(default_factory=frozenset)
    retraction: frozenset[str] = field(default_factory=frozenset)  # what the new text takes back, found in the old
    strong_correction: bool = False  # a correction word that says a change by itself ("switched", "no longer")
    attribute_swap: Region | None = None
    salient_shared: frozenset[str] = field(default_factory=frozenset)  # shared content minus generic words
    renamed_value: bool = False  # names swapped where the value stands, with a word of change
    # What the old text takes back ("switched from *CircleCI* to Jenkins") and the new one states again
    reasserted: frozenset[str] = field(default_factory=frozenset)

    @property
    def same_subject_markers(self) -> bool:
        return self.subject is None


def _region_kind(
    old_tokens: Sequence[_Token], new_tokens: Sequence[_Token], old: TextProfile, new: TextProfile
) -> RegionKind | None:
    def kind(token: _Token, own: TextProfile, other: TextProfile) -> str:
        # The unit of a measure is part of its value ("230 *°C*" / "446 *°F*").
        if any(q.start <= token.start < q.end for q in own.quantities):
            return "number"
        # A capitalised word the other text has in lower case ("*Trailer* seal numbers" / "… of trailers") is a
        # word, not a name.
        return "content" if token.kind == "marker" and stem(token.folded) in other.content else token.kind

    # A light verb ("meets" / "is"), the word of a rate ("$1,850 *per* month" / "… *a* month") or a hedge on a
    # value ("*unos* 446 °F") hardly counts.
    def counts(token: _Token) -> bool:
        return token.folded not in LIGHT_VERBS and token.folded not in _RATE_WORDS and token.folded not in HEDGES

    kinds = {kind(t, old, new) for t in old_tokens if counts(t)}
    kinds |= {kind(t, new, old) for t in new_tokens if counts(t)}
    if "marker" in kinds:
        return RegionKind.MARKER
    if "content" in kinds:
        return RegionKind.WORD
    if "number" in kinds:
        return RegionKind.VALUE
    return None


def _movable(token: _Token) -> bool:
    """A name that can move within a sentence and stay the same name (not a label, letter or number)."""
    return token.kind == "marker" and len(token.surface) > 1 and token.surface.isalpha()


def _regions(new: TextProfile, old: TextProfile) -> tuple[float, list[Region]]:
    a = [t.folded for t in old.tokens]
    b = [t.folded for t in new.tokens]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    opcodes = matcher.get_opcodes()
    # A name present as often in the other text moved; "Ali Ali" / "Ali Jensen" lost an Ali.
    in_new = Counter(t.surface for t in new.tokens)
    in_old = Counter(t.surface for t in old.tokens)
    moved_in_new = {name for name, n in in_new.items() if n >= in_old[name]}
    moved_in_old = {name for name, n in in_old.items() if n >= in_new[name]}
    regions: list[Region] = []
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            continue
        old_tokens, new_tokens = old.tokens[i1:i2], new.tokens[j1:j2]
        # Words that moved ("The user's cat Luna" / "Luna, the user's cat") are no difference.
        old_tokens = tuple(t for t in old_tokens if not (_movable(t) and t.surface in moved_in_new))
        new_tokens = tuple(t for t in new_tokens if not (_movable(t) and t.surface in moved_in_old))
        # "I play bass" and "The user plays bass" speak of one person: the user writes in the first person.
        old_tokens = tuple(t for t in old_tokens if t.folded not in _SELF)
        new_tokens = tuple(t for t in new_tokens if t.folded not in _SELF)
        kind = _region_kind(old_tokens, new_tokens, old, new)
        if kind is None:
            continue
        later_shared = any(
            t.kind in ("content", "marker")
            for tag2, k1, k2, _, _ in opcodes[index + 1 :]
            if tag2 == "equal"
            for t in old.tokens[k1:k2]
        )
        before = old.tokens[i1 - 1].surface.casefold() if i1 > 0 else ""
        owner = i1 == 0 or before.endswith(("'s", "’s")) or before in ("of", "de", "von", "di", "van", "の", "의")
        shared_value_later = any(
            t.kind == "number" and t.folded[:1].isdigit()
            for tag2, k1, k2, _, _ in opcodes[index + 1 :]
            if tag2 == "equal"
            for t in old.tokens[k1:k2]
        )
        regions.append(
            Region(
                kind,
                tuple(t.surface for t in old_tokens),
                tuple(t.surface for t in new_tokens),
                # A name swapped before a shared value is whose value it is ("The user" / "Kettle A" has 4 kids).
                later_shared or (kind is RegionKind.MARKER and shared_value_later),
                owner,
                (
                    (shared_value_later or (later_shared and _heads(old.tokens, i1)))
                    and _bare_number(old_tokens, old)
                    and _bare_number(new_tokens, new)
                )
                or (
                    before.endswith(("'s", "’s"))
                    and _modifies(old_tokens, new_tokens, opcodes[index + 1 :], old.tokens)
                ),
                any(
                    t.kind == "content" and stem(t.folded) not in GENERIC
                    for tag2, k1, k2, _, _ in opcodes[:index]
                    if tag2 == "equal"
                    for t in old.tokens[k1:k2]
                ),
                i1 <= 1,
            )
        )
    return matcher.ratio(), regions


def _modifies(
    old_tokens: Sequence[_Token],
    new_tokens: Sequence[_Token],
    after: Sequence[tuple[str, int, int, int, int]],
    tokens: Sequence[_Token],
) -> bool:
    """Is the one measure that differs, right after a possessive, part of the name of the thing both texts then
    speak of ("the user's *35mm* f/1.8 lens" / "*85mm* …"): which lens, not how long it is?"""
    if len(old_tokens) != 1 or len(new_tokens) != 1 or not after or after[0][0] != "equal":
        return False
    if not (old_tokens[0].folded[:1].isdigit() and new_tokens[0].folded[:1].isdigit()):
        return False
    _, k1, k2, _, _ = after[0]
    return any(t.kind == "content" and stem(t.folded) not in GENERIC for t in tokens[k1 : min(k2, k1 + 3)])


def _heads(tokens: Sequence[_Token], index: int) -> bool:
    """Does the number at `index` stand in the first words, right after a noun it numbers ("*Book* 2 of the
    trilogy", "La *vaca* 214 tiene…"), not after a verb that counts ("drinks 2 coffees")?"""
    if not 0 < index <= 2:
        return False
    before = tokens[index - 1]
    if before.kind not in ("content", "marker"):
        return False
    # "Book 2 of the trilogy": a verb that counts is followed by what it counts ("book 2 rooms"), not "of".
    after = tokens[index + 1] if index + 1 < len(tokens) else None
    return not counts_after(before.folded) or (after is not None and after.kind == "function")


def _bare_number(tokens: Sequence[_Token], text: TextProfile) -> bool:
    """Is the run one number with no physical unit or currency (a count or a label, not a measure)?"""
    if len(tokens) != 1 or not tokens[0].folded[:1].isdigit():
        return False
    at = tokens[0].start
    measured = (q for q in text.quantities if q.dimension and not q.dimension.startswith("count:"))
    return not any(q.start <= at < q.end for q in measured)


def _values(new: TextProfile, old: TextProfile) -> tuple[str, str | None]:
    current_new = [q for q in new.quantities if not q.retracted]
    current_old = [q for q in old.quantities if not q.retracted]
    if not current_new and not current_old:
        return "none", None
    new_dims = {q.dimension for q in current_new}
    old_dims = {q.dimension for q in current_old}
    for dimension in sorted(new_dims & old_dims):
        ours = [q for q in current_new if q.dimension == dimension]
        theirs = [q for q in current_old if q.dimension == dimension]
        # Each side holds a value of this dimension the other lacks: "12 ft by 16 ft" / "5 m by 6 m" changed
        # even though 16 ft is about 5 m.
        ours_alone = [x for x in ours if not any(x.meets(y) for y in theirs)]
        theirs_alone = [y for y in theirs if not any(y.meets(x) for x in ours)]
        if ours_alone and theirs_alone:
            before = "/".join(_show(q, old.text) for q in theirs)
            after = "/".join(_show(q, new.text) for q in ours)
            return "conflict", f"{before} → {after}"
    unmatched_new = [q for q in current_new if not any(q.meets(y) for y in current_old)]
    unmatched_old = [q for q in current_old if not any(q.meets(x) for x in current_new)]
    if not unmatched_new and not unmatched_old:
        return "same", None
    if unmatched_new and not unmatched_old:
        return "extra", None
    if unmatched_old and not unmatched_new:
        return "fewer", None
    return "other", None


def _numbers_alike(new: TextProfile, old: TextProfile) -> bool:
    """The same numbers, whatever their unit words ("2.4 volumes" / "2.4 vols", "10 g per litre" / "10 grams
    … per liter"): the unit reader differs, the values do not. Not when the units measure different things
    ("mashes at 4 °C" / "boils off 4 L/hr"; "4 kids" / "4 km")."""
    a = sorted((q.value, q.dimension) for q in new.quantities if not q.retracted)
    b = sorted((q.value, q.dimension) for q in old.quantities if not q.retracted)
    if not a or len(a) != len(b):
        return False
    return all(x == y and _kindred(d, e) for (x, d), (y, e) in zip(a, b, strict=True))


def _kindred(first: str, second: str) -> bool:
    """Could two dimensions be one unit read two ways: equal, a bare number, two counted words, or physical
    units with the same numerator ("10 g per litre" read as kilogram / metre³, "10 grams … per liter" as
    kilogram) — not "66 km" and "66 L/hr" (metre and metre³ / second)?"""
    if first == second or not first or not second:
        return True
    counted = first.startswith("count:"), second.startswith("count:")
    if any(counted):
        return all(counted)
    return first.split("/")[0].strip() == second.split("/")[0].strip()


def _show(quantity: Quantity, text: str) -> str:
    return text[quantity.start : quantity.end].strip()


def _before_shared(profile_: TextProfile, words: frozenset[str], shared: set[str]) -> bool:
    """Does one of `words` come before a token both texts have (a content word, a marker, or the unit of a
    measure: "the user's *partner* has 4 kids" / "the user has 3.5 kids" count whose kids)?"""
    positions = [i for i, t in enumerate(profile_.tokens) if t.folded in words or t.folded.rstrip("s") in words]
    if not positions:
        return False
    last_shared = max(
        (
            i
            for i, t in enumerate(profile_.tokens)
            if t.folded in shared and (t.kind in ("content", "marker") or (t.kind == "number" and t.folded.isalpha()))
        ),
        default=-1,
    )
    return min(positions) < last_shared


def _subject(
    new: TextProfile,
    old: TextProfile,
    regions: Sequence[Region],
    alignment: float,
    corrected: bool,
    retracts: bool,
) -> str | None:
    """Why the texts speak of two subjects or records, or None when their words allow one."""
    speakers = speaker(new.text), speaker(old.text)
    if None not in speakers and speakers[0] != speakers[1]:
        return f"said by someone else: {speakers[1]} vs {speakers[0]}"
    topics = topic_swap(new.text, old.text) if not retracts and not corrected else None
    if topics is not None:
        return f"another topic: {topics}"
    shared = {t.folded for t in new.tokens} & {t.folded for t in old.tokens}
    both_name = new.names & old.names
    for label, a, b in (
        ("relation", named(new, new.relations, both_name), named(old, old.relations, both_name)),
        ("environment", new.environments, old.environments),
    ):
        if a == b:
            continue
        # "The user's *partner's* resting heart rate": before what both texts say, it changes whose it is;
        # after it ("alerts escalate to the engineering *manager*") it is detail.
        # Chinese and Japanese relatives are read from the characters, not placed among tokens: they count.
        cjk_relative = label == "relation" and new.cjk and old.cjk
        if cjk_relative or _before_shared(new, a - b, shared) or _before_shared(old, b - a, shared):
            return f"different {label}: {', '.join(sorted(b)) or '—'} vs {', '.join(sorted(a)) or '—'}"
    counterpart = None if corrected or retracts else _counterparts(new, old)
    if counterpart is not None:
        return f"another attribute: {counterpart}"
    if retracts:
        return None  # "switched from Dr. Alvarez to Dr. Chen": the names that differ are the change itself
    opposed = _opposed(new, old) if alignment >= STRUCTURED else None
    if opposed is not None and not corrected:
        return f"another condition: {opposed}"
    if alignment < STRUCTURED:
        # Reworded: positions mean little, so only names both texts lack in the other count.
        added, gone = names_swapped(new, old)
        if added and gone and not change_names(new, old, added, gone):
            return f"different names: {', '.join(sorted(gone))} vs {', '.join(sorted(added))}"
        # "The 2024 summer vacation was in Crete" / "The 2025 summer vacation is planned for Crete": two dates
        # and no word saying one replaced the other are two records.
        if new.dates - old.dates and old.dates - new.dates and not corrected:
            return f"different dates: {', '.join(sorted(old.dates))} vs {', '.join(sorted(new.dates))}"
        return None
    substantive = [r for r in regions if r.kind is not RegionKind.VALUE or (r.old and r.new)]
    swapped_markers = [r for r in regions if r.kind is RegionKind.MARKER and r.old and r.new]
    if corrected and len(swapped_markers) == 1 and _dated_or_numbered(swapped_markers[0]):
        # "I *moved* the flea treatment to the 15th", "the app is *now* built with Xcode 16": the one date or
        # number that changed is the new value, wherever the sentence puts it.
        return None
    for region in regions:
        if region.numbering and not corrected:
            return f"different instance: {region.describe()}"
        if region.kind is not RegionKind.MARKER:
            continue
        swapped = bool(region.old and region.new)
        if region.subject_position and (swapped or region.owner_changed):
            return f"different subject: {region.describe()}"
        if swapped and len(substantive) > 1 and not corrected:
            # "Weigh-in on *3 May*: *82.4* kg" / "… *10 May*: *81.9* kg": another record of the same measure.
            return f"different record: {region.describe()}"
    return None


def _counterparts(new: TextProfile, old: TextProfile) -> str | None:
    """A word only the new text has that is the counterpart of one only the old text has, if any."""
    ours = {t.folded for t in new.tokens} - {t.folded for t in old.tokens}
    theirs = {t.folded for t in old.tokens} - {t.folded for t in new.tokens}
    pairs = ((a, b) for a in sorted(ours) for b in sorted(theirs))
    return next((f"{b} → {a}" for a, b in pairs if frozenset((a, b)) in COUNTERPARTS), None)


def names_swapped(new: TextProfile, old: TextProfile) -> tuple[set[str], set[str]]:
    """The names only the new text gives and those only the old one gives (as stems). A capitalised word the
    other text has in lower case ("Trailer seal numbers" / "… of trailers") is no name, nor are the same digits
    read once as a label and once as a value."""
    ours = {stem(n) for n in new.names if not n.startswith("@")} - old.content - digits(old)
    theirs = {stem(n) for n in old.names if not n.startswith("@")} - new.content - digits(new)
    return ours - theirs, theirs - ours


def _opposed(new: TextProfile, old: TextProfile) -> str | None:
    """A word swapped for its opposite where the texts are otherwise aligned ("under" → "over"), if any."""
    a = [t.folded for t in old.tokens]
    b = [t.folded for t in new.tokens]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "replace" and any(frozenset((x, y)) in OPPOSITES for x in a[i1:i2] for y in b[j1:j2]):
            return f"{' '.join(a[i1:i2])} → {' '.join(b[j1:j2])}"
    return None


def _dated_or_numbered(region: Region) -> bool:
    words = [w.casefold() for w in (*region.old, *region.new)]
    return all(
        w.isdigit()
        or w in MONTHS
        or w in WEEKDAYS
        or w in PERIODS
        or DATE_TOKEN.match(w)
        or re.fullmatch(r"[a-z]?\d+[a-z]?", w)
        for w in words
    )


def _attribute_swap(regions: Sequence[Region]) -> Region | None:
    """Other words swapped before what both texts share ("*max* heart rate" / "*resting* heart rate"), or
    beside a changed value ("120 ppm *calcium*" / "45 ppm *sulfate*"): another attribute, unless the swap is
    a rewording — which only the embedding can tell (see `dedupe.judge`)."""
    value_swapped = any(r.kind is RegionKind.VALUE and r.old and r.new for r in regions)
    for region in regions:
        if region.kind is RegionKind.WORD and region.old and region.new and (region.subject_position or value_swapped):
            return region
    return None


def compare(new_text: str, old_text: str) -> Comparison:
    new_text, old_text = acronyms_aligned(new_text, old_text)
    new, old = profile(new_text), profile(old_text)
    alignment, regions = _regions(new, old)
    union = new.terms | old.terms
    overlap = len(new.terms & old.terms) / len(union) if union else 1.0
    values, change = _values(new, old)
    correction = tuple(c for c in new.correction if c not in old.correction)
    if values == "other" and _numbers_alike(new, old):
        values = "same"
    asks = new.text.rstrip().endswith("?")
    retraction = _retraction(new, old) if not asks else frozenset()
    added, gone = names_swapped(new, old)
    renamed = bool(added and gone) and change_names(new, old, added, gone)
    return Comparison(
        alignment=alignment,
        overlap=overlap,
        # A unit word is how a value is spelled, not something one text says and the other lacks.
        new_only=new.terms - old.terms - new.unit_words,
        old_only=old.terms - new.terms - old.unit_words,
        regions=tuple(regions),
        subject=_subject(new, old, regions, alignment, bool(correction), bool(retraction)),
        values=values,
        value_change=change,
        correction=correction,
        negation_flip=new.negated != old.negated and alignment >= STRUCTURED,
        extra_names=new.names - old.names if not old.names - new.names else frozenset(),
        retraction=retraction,
        strong_correction=any(c not in WEAK_CORRECTION for c in correction),
        attribute_swap=_attribute_swap(regions) if alignment >= STRUCTURED else None,
        # The same relative or position in both ("the user's sister") is a shared thing too.
        salient_shared=(new.terms & old.terms) - GENERIC | (new.relations & old.relations),
        renamed_value=renamed and not asks,
        reasserted=(old.retracted - new.retracted - new.contrasted) & (new.content | {stem(n) for n in new.names}),
    )


def _retraction(new: TextProfile, old: TextProfile) -> frozenset[str]:
    """What the new text takes back that the old one states (and does not take back itself: "Priya prefers
    tabs rather than spaces" retracts nothing of "Diego prefers tabs rather than spaces")."""
    if not new.retracted - old.retracted - old.contrasted:
        return frozenset()
    numbers = {f"{q.value:g}" for q in old.quantities}
    cjk = {t.folded for t in old.tokens} if old.cjk else set()
    stems = {stem(n) for n in old.names}
    taken_back = new.retracted - old.retracted - old.contrasted
    return frozenset(t for t in taken_back if t in old.content or t in stems or t in numbers or t in cjk)
