"""The write gate: the check every candidate learning passes before anything is stored.

Whatever proposes a learning (the LLM's ``save_learning`` tool, the turn observer, the background learning
agent) hands the text to `WriteGate.check`, which refuses, in this order: empty text, text outside the size
limits, prompt-injection / memory-poisoning text, secrets, personal data, unstable or one-off facts, then any
rule the app added. The first rule that fires decides the verdict.

A refused text is stored nowhere, so a verdict never carries the offending value: the reason names the rule
and, for secrets, at most a redacted hint such as ``sk-proj-…a1b2`` (see `redact_hint`).

The rules are data (`GateRule`, built-ins in `gate_rules`): apps add their own (``extra_rules=``,
`WriteGate.with_rules`), replace a built-in by reusing its id, or switch built-ins off by id, id prefix or
kind (``disable=``, `WriteGate.without`). Personal-data categories are switched with ``personal_data=``.

Decisions (each one is tested):

* Pure hexadecimal strings (git SHAs, MD5/SHA digests) are *not* secrets for the generic token rule: they
  lack mixed case and are far more often digests than credentials. Next to a secret keyword
  (``api_key=…``, ``the password is …``) any value is refused by the assignment rule.
* Placeholders are not secrets: ``${DB_PASSWORD}``, ``<your-key>``, ``os.environ["X"]``, ``API_KEY_NAME``.
* 13-digit (legacy Visa) card numbers are not matched: they collide with EAN-13 barcodes in product data.
  IBANs are matched as printed (upper case) and must pass the country length and mod-97 checks.
* Injection means text that addresses the model to override its instructions, role or tools, or to leak
  data: imperatives ("Ignore all previous instructions", "Act as DAN", "Call the tool X with …" opening a
  sentence), chat-template tags, tool-call JSON. A third-person preference about the assistant ("User prefers
  that the assistant always answers in metric units", "User wants the assistant to act as a reviewer") and
  conditional tool routing ("For best sellers, call the get_products tool with sort BEST_SELLING") are
  learnings, not injection.
* Unstable means wrong tomorrow (today, right now, 2 hours ago, this week) or tied to one record (UUIDs,
  ``req_…``/``sess_…`` ids, "order #…"); durations ("a 60 minute boil", "ready in 2 weeks") and rolling
  windows ("the last 30 days") are stable.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypedDict

from ..errors import ConfigurationError, ValidationError
from .gate_rule import (
    ALLOWED,
    KINDS,
    PERSONAL_DATA_CATEGORIES,
    SIZE_RULES,
    GateHit,
    GateRule,
    GateVerdict,
    Kind,
    compact,
    entropy,
    luhn_ok,
    normalize,
    random_token,
    redact_hint,
    word_set,
)
from .needles import NeedleIndex, needle_groups
from .protective import protective_rule
from .sample_values import blank_samples

__all__ = [
    "KINDS",
    "LEARNED_ID",
    "PERSONAL_DATA_CATEGORIES",
    "GateHit",
    "GateLineResult",
    "GateRule",
    "GateVerdict",
    "Kind",
    "WriteGate",
    "compact",
    "entropy",
    "gate_lines",
    "luhn_ok",
    "normalize",
    "random_token",
    "redact_hint",
]

#: An embedding as the save path has it (a list of floats or a numpy array).
Vector = Sequence[float] | Any

# --- the gate ---------------------------------------------------------------------------------------------


_KIND_ORDER: tuple[Kind, ...] = ("injection", "secret", "personal_data", "unstable", "custom")


@functools.cache
def builtin_rules() -> tuple[GateRule, ...]:
    """The built-in rules, in evaluation order: injection first (an injection carrying a key is named as
    injection), then secrets, personal data and unstable facts; within a kind, the maintained detectors first
    (detect-secrets, python-stdnum, phonenumbers), then the project's pattern rules (`gate_rules`) and its
    rules for what no library covers. Loaded on first use: those modules import this one."""
    from .gate_rules import BUILTIN_RULES
    from .id_detectors import ID_RULES
    from .personal_details import PERSONAL_DETAIL_RULES
    from .phone_detectors import PHONE_RULES
    from .poisoning import POISONING_RULES
    from .poisoning_acts import ACT_RULES
    from .prose_secrets import PROSE_SECRET_RULES
    from .secret_detectors import detect_secrets_rules
    from .security_answers import SECURITY_ANSWER_RULES
    from .seed_phrases import SEED_PHRASE_RULES
    from .third_party_health import THIRD_PARTY_HEALTH_RULES
    from .vendor_tokens import VENDOR_TOKEN_RULES

    everything = (
        *detect_secrets_rules(),
        *SEED_PHRASE_RULES,
        *ID_RULES,
        *PHONE_RULES,
        *BUILTIN_RULES,
        *POISONING_RULES,
        *ACT_RULES,
        LEARNED_RULE,
        *PROSE_SECRET_RULES,
        *SECURITY_ANSWER_RULES,
        *VENDOR_TOKEN_RULES,
        *PERSONAL_DETAIL_RULES,
        *THIRD_PARTY_HEALTH_RULES,
    )
    # The learned classifier speaks after every rule that names a secret or personal data it found.
    order = {kind: 2 * i for i, kind in enumerate(_KIND_ORDER)} | {LEARNED_ID: 2 * _KIND_ORDER.index("unstable") - 1}
    return tuple(sorted(everything, key=lambda rule: order.get(rule.id, order[rule.kind])))


#: The learned memory-poisoning classifier (`poisoning_model`), as a rule: after the secret and personal-data
#: rules, so a rule that names what it found speaks first. With a vector (`WriteGate.check(text, vector)`) it also
#: reads the text's embedding.
LEARNED_ID = "injection.poisoning.learned"


def _planted(text: str, vector: Vector | None = None) -> bool:
    """The learned classifier's verdict, less the user's own safety rules (`protective`). Fenced code is read for
    its comments only, and numbered steps not at all: the classifier learned orders planted in prose, and a config
    file's `User=app` or a procedure's "Click Remove and Redo" read as such. What code or steps do (a URL piped
    into a shell, data sent away, obeying a site) is the rules' to judge, and they read everything."""
    from .poisoning_model import load_model

    model = load_model()
    if model is None:
        return False
    prose = _without_code(text)
    if prose is not text:
        vector = None  # the embedding is of the text with its code
    return model.refuses(prose, vector) and not protective_rule(text)


# A fence's code, on its own lines or (a learning's text is one line) inline: "```sql DELETE … ```".
_FENCED = re.compile(r"(?P<fence>```|~~~)[\w+.#-]*(?P<code>\s.*?)(?P=fence)", re.DOTALL)
_COMMENT_LINE = re.compile(r"^\s*(?:#|//|--|/\*|\*|;|<!--|%|rem\s)", re.IGNORECASE)


# Numbered steps, two or more: "… steps that worked: 1. Click Remove and Redo. 2. …" (to a person, by construction).
_STEPS = re.compile(r"(?:(?<=\s)|^)1[.)]\s.+?(?:\s2[.)]\s).*", re.DOTALL)


def _without_code(text: str) -> str:
    """What the learned classifier reads: prose, without fenced code (its comments kept) or a list of steps."""
    if _STEPS.search(text) is not None:
        text = _STEPS.sub(" ", text)
    if "```" not in text and "~~~" not in text:
        return text

    def comments(match: re.Match[str]) -> str:
        lines = match.group("code").splitlines()
        if len(lines) < 2:
            return " "  # inline code: its comments cannot be told from its statements
        return "\n" + "".join(line + "\n" for line in lines if _COMMENT_LINE.match(line))

    return _FENCED.sub(comments, text)


def _learned_finder(text: str) -> tuple[int, int] | None:
    return (0, len(text)) if _planted(text) else None


LEARNED_RULE = GateRule(
    LEARNED_ID,
    "injection",
    "reads like an instruction planted for the assistant (learned classifier)",
    "",
    finder=_learned_finder,
    detector="learnloop:poisoning-model",
    mention_ok=True,
)


def _about_attacks(text: str) -> bool:
    from .poisoning import about_attacks

    return about_attacks(text)


# A Chinese, Japanese or Korean character says about what three Latin letters do: "王伟是素食者。" is a sentence.
_WIDE_SCRIPT = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3]")


def _written_length(text: str) -> int:
    return len(text) + 2 * len(_WIDE_SCRIPT.findall(text))


def _selected(rule_id: str, kind: str, selectors: Iterable[str]) -> bool:
    return any(s in (kind, rule_id) or rule_id.startswith(s + ".") for s in selectors)


class WriteGate:
    """Decides whether a candidate learning may be stored. Immutable; safe to share between threads.

    personal_data: categories to refuse (default all of `PERSONAL_DATA_CATEGORIES`); True/False for all/none.
    max_chars / min_chars: size limits on the stripped text (``max_chars=None``: no upper limit).
    extra_rules: the app's own rules, checked after the built-ins; one reusing a built-in id replaces it.
    disable: rule ids, id prefixes (``"secret.github"``) or kinds (``"unstable"``) to switch off.
    """

    def __init__(
        self,
        *,
        personal_data: bool | Iterable[str] = True,
        max_chars: int | None = 1000,
        min_chars: int = 8,
        extra_rules: Iterable[GateRule] = (),
        disable: Iterable[str] = (),
    ) -> None:
        if personal_data is True or personal_data is False:
            categories = PERSONAL_DATA_CATEGORIES if personal_data else ()
        else:
            categories = tuple(personal_data)
        unknown = sorted(set(categories) - set(PERSONAL_DATA_CATEGORIES))
        if unknown:
            raise ConfigurationError(
                f"unknown personal-data categories: {', '.join(unknown)}",
                allowed=list(PERSONAL_DATA_CATEGORIES),
            )
        if min_chars < 0 or (max_chars is not None and max_chars < max(min_chars, 1)):
            raise ConfigurationError("the write gate needs 0 <= min_chars <= max_chars", max_chars=max_chars)
        self.personal_data = categories
        self.max_chars = max_chars
        self.min_chars = min_chars
        self.extra_rules = tuple(extra_rules)
        self.disable = tuple(disable)
        self._options: dict[str, Any] = {
            "personal_data": categories,
            "max_chars": max_chars,
            "min_chars": min_chars,
            "extra_rules": self.extra_rules,
            "disable": self.disable,
        }

        extras = {rule.id: rule for rule in self.extra_rules}
        rules = [extras.pop(rule.id, rule) for rule in builtin_rules()] + list(extras.values())
        known_ids = [r.id for r in rules] + [rule_id for rule_id, _ in SIZE_RULES]
        for selector in self.disable:
            if selector not in KINDS and not any(_selected(i, "", (selector,)) for i in known_ids):
                raise ConfigurationError(f"disable={selector!r} matches no gate rule id or kind")
        off = (
            *self.disable,
            *(f"personal_data.{c}" for c in PERSONAL_DATA_CATEGORIES if c not in categories),
        )
        self.rules: tuple[GateRule, ...] = tuple(r for r in rules if not _selected(r.id, r.kind, off))
        self._size_on = {rule_id for rule_id, kind in SIZE_RULES if not _selected(rule_id, kind, off)}
        # Each rule's needles, declared or read from its pattern, found for all rules at once per view: a rule
        # with needles (or words) runs only where one is. None: one of them is "", in every text.
        needles, also = zip(*map(_needles_of, self.rules), strict=True) if self.rules else ((), ())
        self._filters = tuple(
            (bool(n or r.words), None if "" in n else frozenset(n)) for r, n in zip(self.rules, needles, strict=True)
        )
        # The further needle sets a rule's every match needs one of (`GateRule.also_needles`), for the same view.
        self._also = tuple(
            tuple(frozenset(g) for g in a)
            if n and "" not in n and not r.words and all(g and "" not in g for g in a)
            else ()
            for r, n, a in zip(self.rules, needles, also, strict=True)
        )
        self._needle_index = {
            view: NeedleIndex(
                n
                for r, ns, a in zip(self.rules, needles, also, strict=True)
                if (r.target == "compact") == (view == "compact")
                for n in (*ns, *(x for g in a for x in g))
            )
            for view in ("lower", "compact")
        }
        # Which rules a needle lets run, and the rules that run whatever needles a text holds (no needles, or
        # words to look for when none is there): a check visits ~40 of the ~140 rules, not all of them.
        self._always = tuple(
            i
            for i, (filtered, found) in enumerate(self._filters)
            if not filtered or found is None or self.rules[i].words
        )
        self._runs: dict[str, dict[str, tuple[int, ...]]] = {"lower": {}, "compact": {}}
        for i, (rule, (filtered, found)) in enumerate(zip(self.rules, self._filters, strict=True)):
            if filtered and found is not None and not rule.words:
                by_needle = self._runs["compact" if rule.target == "compact" else "lower"]
                for needle in found:
                    by_needle[needle] = (*by_needle.get(needle, ()), i)
        self._has_compact = any(r.target == "compact" for r in self.rules)

    def __repr__(self) -> str:
        return f"WriteGate({', '.join(f'{k}={v!r}' for k, v in self._options.items())})"

    def with_rules(self, *rules: GateRule) -> WriteGate:
        """A new gate with `rules` added (or replacing built-ins with the same id)."""
        return WriteGate(**{**self._options, "extra_rules": (*self.extra_rules, *rules)})

    def without(self, *selectors: str) -> WriteGate:
        """A new gate with more rules switched off (ids, id prefixes or kinds)."""
        return WriteGate(**{**self._options, "disable": (*self.disable, *selectors)})

    def check(self, text: str, vector: Vector | None = None) -> GateVerdict:
        """The verdict for one candidate learning text. `vector`, if given, is the text's embedding by the
        bundled MiniLM (see `vector_model_ids`): the learned poisoning classifier reads it too."""
        if not isinstance(text, str):
            raise ValidationError("learning text must be a string", type=type(text).__name__)
        stripped = text.strip()
        if not stripped:
            if "empty" in self._size_on:
                return GateVerdict(False, "the text is empty", "empty", "empty")
            return ALLOWED
        if _written_length(stripped) < self.min_chars and "size.too_short" in self._size_on:
            reason = f"too short to be a reusable learning (under {self.min_chars} characters)"
            return GateVerdict(False, reason, "size.too_short", "size")
        if self.max_chars is not None and len(stripped) > self.max_chars and "size.too_long" in self._size_on:
            reason = f"longer than {self.max_chars} characters; store one concise statement"
            return GateVerdict(False, reason, "size.too_long", "size")
        hit = self.first_hit(text, vector)
        if hit is None:
            return ALLOWED
        rule = hit.rule
        reason = f"{rule.reason} ({redact_hint(hit.value)})" if rule.hint else rule.reason
        return GateVerdict(False, reason, rule.id, rule.kind, rule.detector)

    def _first_hit(self, text: str) -> tuple[GateRule, str] | None:
        hit = self.first_hit(text)
        return None if hit is None else (hit.rule, hit.value)

    @property
    def learns(self) -> bool:
        """Whether the learned poisoning classifier is on (it reads a vector if `check` is given one)."""
        return any(rule.id == LEARNED_ID for rule in self.rules)

    def check_learned(self, text: str, vector: Vector) -> GateVerdict:
        """Only the learned classifier, with the text's vector: for callers that already ran `check(text)`
        and then computed the embedding (the save path). Allowed if the classifier is off."""
        rule = next((r for r in self.rules if r.id == LEARNED_ID), None)
        if rule is None:
            return ALLOWED
        norm = normalize(text)
        if not _planted(norm, vector) or _about_attacks(norm):
            return ALLOWED
        return GateVerdict(False, rule.reason, rule.id, rule.kind, rule.detector)

    def first_hit(self, text: str, vector: Vector | None = None) -> GateHit | None:
        """The first rule that fires and where (never put the value in anything stored). No size rules."""
        norm = blank_samples(normalize(text))
        text = blank_samples(text)
        lower = norm.lower()
        original = norm if len(lower) == len(norm) else None  # lowercasing rarely changes the length
        digits = sum(map(norm.count, "0123456789"))
        views: dict[str, str] = {"text": norm, "lower": lower, "raw": text}
        tokens: set[str] | None = None
        about: bool | None = None
        if self._has_compact:
            views["compact"] = compact(lower)
        present: dict[str, frozenset[str]] = {}
        candidates = set(self._always)
        for view, by_needle in self._runs.items():
            if view not in views:
                continue
            # "İ" lowers to "i" + a combining dot, which `re` ignoring case would still read as "i".
            hay = views[view] if original is not None else views[view].replace("\u0307", "")
            found = present[view] = self._needle_index[view].present(hay)
            for needle in found:
                candidates.update(by_needle.get(needle, ()))
        for index in sorted(candidates):
            rule = self.rules[index]
            filtered, needles = self._filters[index]
            if digits < rule.min_digits:
                continue
            if filtered:
                found = present["compact" if rule.target == "compact" else "lower"]
                if any(group.isdisjoint(found) for group in self._also[index]):
                    continue
                if needles is not None and needles.isdisjoint(found):
                    if not rule.words:
                        continue
                    if tokens is None:
                        tokens = word_set(lower)
                    if tokens.isdisjoint(rule.words):
                        continue
            if vector is not None and rule.id == LEARNED_ID:
                span = _learned_span(norm, vector)
            else:
                span = rule.locate(views[rule.target], original if rule.target == "lower" else None)
            if span is not None and rule.mention_ok:
                if about is None:
                    about = _about_attacks(norm)
                if about:
                    continue
            if span is not None:
                cut = {"text": norm, "lower": original or lower, "raw": text}.get(rule.target)
                start, end = span
                return GateHit(rule, (cut or views["compact"])[start:end], start, end, cut)
        return None


def _needles_of(rule: GateRule) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """The rule's needles and further needle sets (see `GateRule.also_needles`); for a plain pattern that
    declares none, read from it: strings one of which its every match holds, one set per required part."""
    if rule.needles or rule.words or rule.finder is not None or rule.target not in ("text", "lower"):
        return rule.needles, rule.also_needles
    groups = needle_groups(rule.regex)
    return (groups[0], groups[1:]) if groups else ((), ())


def _learned_span(text: str, vector: Vector) -> tuple[int, int] | None:
    return (0, len(text)) if _planted(text, vector) else None


class GateLineResult(TypedDict):
    text: str
    allowed: bool
    reason: str | None
    rule: str | None
    kind: str | None
    detector: str | None


def gate_lines(lines: Iterable[str], gate: WriteGate | None = None) -> Iterator[GateLineResult]:
    """Check one text per line (blank lines skipped); for ``learnloop gate FILE``. Nothing is stored."""
    gate = gate or WriteGate()
    for line in lines:
        text = line.rstrip("\r\n")
        if not text.strip():
            continue
        v = gate.check(text)
        yield {
            "text": text,
            "allowed": v.allowed,
            "reason": v.reason,
            "rule": v.rule,
            "kind": v.kind,
            "detector": v.detector,
        }
