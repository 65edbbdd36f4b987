"""The vocabulary of the write gate's rules: `GateRule`, its verdicts and hits, and the text views and checks
rules share (`normalize`, `compact`, `luhn_ok`, `entropy`, `random_token`, `redact_hint`).

The rule modules (`gate_rules`, the detectors, the poisoning rules) build on this module and `gate` assembles
them, so no rule module imports the gate that runs it.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ConfigurationError

__all__ = [
    "ALLOWED",
    "KINDS",
    "PERSONAL_DATA_CATEGORIES",
    "SIZE_RULES",
    "GateHit",
    "GateRule",
    "GateVerdict",
    "Kind",
    "Target",
    "compact",
    "entropy",
    "luhn_ok",
    "normalize",
    "random_token",
    "redact_hint",
    "word_set",
]

Kind = Literal["secret", "personal_data", "injection", "unstable", "size", "empty", "custom"]
Target = Literal["text", "lower", "raw", "compact"]
KINDS: tuple[Kind, ...] = ("secret", "personal_data", "injection", "unstable", "size", "empty", "custom")
#: A built-in rule ``personal_data.<category>[.<variant>]`` belongs to ``<category>``.
PERSONAL_DATA_CATEGORIES: tuple[str, ...] = (
    "email",
    "phone",
    "government_id",
    "card",
    "iban",
    "address",
    "birth_date",
    "bank_account",
    "health",
    "criminal_record",
    "vehicle_plate",
)
SIZE_RULES: tuple[tuple[str, Kind], ...] = (("empty", "empty"), ("size.too_short", "size"), ("size.too_long", "size"))


@dataclass(frozen=True, slots=True)
class GateVerdict:
    """The gate's answer. `reason` is a short sentence, `rule` a stable id, `kind` one of `KINDS`."""

    allowed: bool
    reason: str | None = None
    rule: str | None = None
    kind: Kind | None = None
    #: Which detector fired: a library and its part ("detect-secrets:KeywordDetector", "python-stdnum:it.codicefiscale",
    #: "phonenumbers") or "learnloop" for the project's own rules. Not part of equality: the rule id decides.
    detector: str | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "allowed": self.allowed,
            "reason": self.reason,
            "rule": self.rule,
            "kind": self.kind,
            "detector": self.detector,
        }


ALLOWED = GateVerdict(True)


@dataclass(frozen=True, slots=True)
class GateRule:
    """One refusal rule, as data.

    `pattern` may be a string (compiled on construction) or a compiled pattern. The validator, if any,
    receives the named group ``value`` (or the whole match) and returns True to confirm it; a rejected match
    lets the search go on to the next one. Cheap pre-filters skip the regex entirely: `min_digits` (ASCII
    digits the text must hold) and, if given, `needles` / `words`: the rule runs only if one of the needles
    occurs in the lowercased text (the compact view for compact rules) or one of the words is a whole word of
    it (a maximal run of letters); and, with `also_needles`, one needle of each of those sets as well (a rule
    whose every match needs two parts, each part's words).
    `target` picks the view the regex runs on (see `normalize` and `compact`): ``"text"`` (normalised),
    ``"lower"`` (normalised and lowercased: write the pattern in lowercase; much faster than re.IGNORECASE,
    and the validator still sees the value in its original case), ``"raw"`` (as given) or ``"compact"``.
    With `hint` the reason gets a redacted hint of the value.
    `finder`, if given, replaces the regex: it receives the target view and returns the span of what it found
    (or None); rules backed by a maintained library (`detectors`) are built this way, and `detector` names it.
    """

    id: str
    kind: Kind
    reason: str
    pattern: re.Pattern[str] | str
    validator: Callable[[str], bool] | None = None
    needles: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    min_digits: int = 0
    target: Target = "text"
    hint: bool = False
    finder: Callable[[str], tuple[int, int] | None] | None = field(default=None, compare=False)
    detector: str = "learnloop"
    #: A hit in a text *about* attacks (a blog post explaining prompt injection) is a mention, not an attack.
    mention_ok: bool = False
    also_needles: tuple[tuple[str, ...], ...] = ()
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.id or not self.reason:
            raise ConfigurationError("a gate rule needs an id and a reason", rule=self.id)
        if self.kind not in KINDS:
            raise ConfigurationError(f"gate rule {self.id!r}: bad kind {self.kind!r}", allowed=list(KINDS))
        if self.target not in ("text", "lower", "raw", "compact"):
            raise ConfigurationError(f"gate rule {self.id!r} has unknown target {self.target!r}")
        if self.finder is not None and self.target != "text":
            raise ConfigurationError(f"gate rule {self.id!r}: a finder reads the normalised text (target 'text')")
        regex = self.pattern if isinstance(self.pattern, re.Pattern) else re.compile(self.pattern)
        object.__setattr__(self, "regex", regex)
        object.__setattr__(self, "needles", tuple(n.lower() for n in self.needles))
        object.__setattr__(self, "also_needles", tuple(tuple(n.lower() for n in g) for g in self.also_needles))
        object.__setattr__(self, "words", tuple(w.lower() for w in self.words))

    def find(self, view: str, original: str | None = None) -> str | None:
        """The first confirmed value in `view` (this rule's target view), or None.

        `original`, if given, is a text of the same length as `view` the value is cut from (the normalised
        text for the ``"lower"`` view, so validators and hints see the original case).
        """
        span = self.locate(view, original)
        return None if span is None else (view if original is None else original)[span[0] : span[1]]

    def locate(self, view: str, original: str | None = None) -> tuple[int, int] | None:
        """Where in `view` the first confirmed value is (see `find`)."""
        if self.finder is not None:
            return self.finder(view)
        if self.validator is None:
            m = self.regex.search(view)
            return None if m is None else _span(m)
        for m in self.regex.finditer(view):
            start, end = _span(m)
            if self.validator((view if original is None else original)[start:end]):
                return start, end
        return None


def _span(m: re.Match[str]) -> tuple[int, int]:
    """The first named group that took part in the match, else the whole match."""
    return next((m.span(g) for g in m.re.groupindex if m.start(g) >= 0), m.span())


@dataclass(frozen=True, slots=True)
class GateHit:
    """What fired: the rule, the value it found and where, in `text` (the view the span points into: the
    normalised text, or the raw one for ``"raw"`` rules; None for the ``"compact"`` view, which has no
    positions in the original). Never store `value`."""

    rule: GateRule
    value: str
    start: int
    end: int
    text: str | None


# --- text views -------------------------------------------------------------------------------------------

_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff"
    "\U000e0000-\U000e007f]+"
)
_PUNCT = re.compile("[\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u2010-\u2015]")
_PUNCT_MAP = str.maketrans(
    "\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u2010\u2011\u2012\u2013\u2014\u2015", "''''\"\"\"------"
)
_HSPACE = re.compile(r"[^\S\n]{2,}|[^\S\n ]")
_LEET_FROM, _LEET_TO = "0134579@$!|", "oieastgasii"
_LEET = bytes.maketrans(_LEET_FROM.encode(), _LEET_TO.encode())
_NON_LETTER_BYTES = bytes(c for c in range(256) if not 97 <= c <= 122 and chr(c) not in _LEET_FROM)
_LOOKALIKE = str.maketrans("аеорсухіѕјԁɡοαειντκ", "aeopcyxisjdgoaeivtk")
_LOOKALIKE_RE = re.compile("[аеорсухіѕјԁɡοαειντκ]")
_LETTERS_ONLY = bytes(c if 97 <= c <= 122 else 32 for c in range(256))


def normalize(text: str) -> str:
    """NFKC, invisible characters removed, curly quotes straightened, horizontal whitespace collapsed."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        if _INVISIBLE.search(text):
            text = _INVISIBLE.sub("", text)
        if _PUNCT.search(text):
            text = text.translate(_PUNCT_MAP)
    return _HSPACE.sub(" ", text) if "  " in text or not text.isprintable() else text


def compact(lowered: str) -> str:
    """Letters only, leetspeak and Cyrillic/Greek look-alikes mapped to Latin: defeats spacing tricks."""
    if not lowered.isascii() and _LOOKALIKE_RE.search(lowered):
        lowered = lowered.translate(_LOOKALIKE)
    return lowered.encode("ascii", "ignore").translate(_LEET, _NON_LETTER_BYTES).decode()


def word_set(lowered: str) -> set[str]:
    """The ASCII words of a lowercased text (maximal runs of a-z), for the `words` pre-filter."""
    return set(lowered.encode("ascii", "replace").translate(_LETTERS_ONLY).decode().split())


_PUBLIC_PREFIX = re.compile(
    r"^(?:sk-(?:ant-(?:api|admin)\d\d-|proj-|svcacct-|admin-)?|gh[pousr]_|github_pat_|gl[a-z]{1,5}-|xox[a-z]-"
    r"|xapp-|[rs]k_(?:live|test)_|whsec_|AKIA|ASIA|AIza|GOCSPX-|SG\.|npm_|pypi-|hf_|eyJ|shp[a-z]{2}_|do[po]_v1_"
    r"|hv[sb]\.|lin_api_|glsa_|PMAK-|dapi|ATATT|key-)"
)


def redact_hint(match: re.Match[str] | str) -> str:
    """A hint that never reveals the secret: a public vendor prefix and, for long values, the last 4 chars.

    ``redact_hint("sk-proj-Ab3…(60 chars)…a1b2")`` → ``"sk-proj-…a1b2"``; a short password gives ``"…"``.
    """
    value = (match.group(0) if isinstance(match, re.Match) else match).strip()
    m = _PUBLIC_PREFIX.match(value)
    prefix = m.group(0) if m else ""
    tail = value[-4:] if len(value) - len(prefix) >= 20 else ""
    return f"{prefix}…{tail}"


# --- validators apps can reuse in their own rules ---------------------------------------------------------


def luhn_ok(digits: str) -> bool:
    """The Luhn (mod-10) check used by payment card numbers and some national ids."""
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = ord(c) - 48
        total += (d * 2 - 9 if d > 4 else d * 2) if i % 2 else d
    return total % 10 == 0


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


_WORDY = re.compile(r"[a-z]{4,}|[A-Z]{5,}")


def random_token(value: str) -> bool:
    """Machine-generated look: ≥ 30 letters/digits mixing upper, lower and digits, with frequent class switches
    (random base62 switches on ~60% of adjacent pairs, CamelCase ~30%) and few word-like runs (≥ 4 lowercase
    or ≥ 5 uppercase letters cover under half of a random token, most of an identifier). Pure hex never
    qualifies (no mixed case), by design.
    """
    core = "".join(c for c in value if c.isalnum())
    if len(core) < 30:
        return False
    classes = [0 if c.isdigit() else 1 if c.isupper() else 2 for c in core]
    if not {0, 1, 2} <= set(classes):
        return False
    switches = sum(a != b for a, b in itertools.pairwise(classes))
    wordy = sum(len(run) for run in _WORDY.findall(core))
    return switches / (len(core) - 1) >= 0.3 and wordy < len(core) / 2 and entropy(core) >= 3.5
