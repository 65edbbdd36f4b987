"""What of a tool call may be stored or shown, and what knowledge shared by a tenant keeps of it.

Two rules, applied before anything reaches the store:

* **The write gate sees every value.** Each argument value (with its name, so ``api_key: …`` reads as the
  assignment it is) and each error text that is stored or shown in a prompt passes `engine.gate`; a value
  it refuses as a secret, personal data, an injection or by an app rule becomes ``<redacted:RULE>``. The
  gate's size and stability rules are off here: a short value is not a reusable learning, but it may still
  be a password, and a date argument is not a leak.
* **Shared rows keep the shape, not the values.** Templates and recovery patterns learned from anyone (user
  '' rows every user of the tenant reads), and the insights drawn from them, store a call as its argument
  names, the types of its values, and only those constants that are the API's own vocabulary rather than a
  user's data: an enum value declared in the tool's input schema, an UPPER_SNAKE constant such as
  ``BEST_SELLING``, or an identifier-like value of an argument the app named as a key parameter — each only
  if the gate lets it through. The user's own values stay in the user's rows (their signals), which
  `forget` deletes.

A proven free-text *query* is the point of some calls (a GraphQL document, a SQL statement, a search
expression such as ``created_at:>2024-05-01 status:open``): reduced to ``<text>`` it would teach nothing. A
string that reads as one (`query_like`) is kept in the shape after the gate's redaction, with its literal
values parameterised — dates become ``<date>``, ids ``<id>``, amounts ``<amount>``, other numbers
``<number>``, and quoted strings or ``field:value`` values that are not the API's lowercase terms or constants
``<text>`` (`parameterise`) — so the query's structure and field names are shared, never a user's dates,
order numbers, sums or names. Natural-language text stays ``<text>``.

A shape is also what identifies a call pattern: the signature of a template and the fingerprint of a
failure are hashes of it, so ``limit=10`` and ``limit=20`` reinforce the same template while
``sort_key=REVENUE`` and ``sort_key=BEST_SELLING`` do not. Shaping is idempotent, and shaping the stored
(gated) arguments gives the shape the raw ones had, so a recovery can be described from a failed call read
back from the store.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from weakref import WeakKeyDictionary

from ..capture.gate import WriteGate

__all__ = [
    "REDACTED_KINDS",
    "Redactor",
    "Shaper",
    "parameterise",
    "query_fields",
    "query_like",
    "schema_constants",
    "types_only",
]

# What the gate refuses that must not be stored: the rest (size, unstable facts) concerns learnings only.
REDACTED_KINDS = frozenset({"secret", "personal_data", "injection", "custom"})
_CONSTANT = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]{0,39}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")
_PLACEHOLDER = re.compile(r"<[a-z]+>")  # a shape's own "<text>", "<number>": shaping twice changes nothing
_SPACE = re.compile(r"(\s+)")
# Query languages: braces around fields (GraphQL, JSON-ish selections), a SQL statement, or a search expression
# made only of `field:value` terms and boolean operators.
_BRACES = re.compile(r"\{[^{}]*[A-Za-z_][^{}]*\}")
_SQL = re.compile(r"^\s*(?:select|with)\b.+\bfrom\b", re.I | re.S)
_SEARCH_TERM = re.compile(r"\(?-?[A-Za-z_][A-Za-z0-9_.]*:[<>=!]*(?!//)\S+\)?|AND|OR|NOT|\(|\)")
_MAX_QUERY = 2000
# A placeholder already in a text (ours, or the gate's `<redacted:RULE>`) is left as it is.
_TOKEN = re.compile(r"(<[a-z_]+(?::[^<>\s]+)?>)")
_LITERALS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"gid://\S+?(?=[\s\"',)}\]]|$)"), "<id>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<id>"),
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w-])"
            r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
        ),
        "<date>",
    ),
    (re.compile(r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP|JPY|CHF|CAD|AUD)\b"), "<amount>"),
    (re.compile(r"\b\d+\.\d+\b"), "<amount>"),
    (
        re.compile(r"#\d+\b|\b(?=[A-Za-z0-9_-]*\d{3})(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{4,}\b|\b[0-9a-f]{12,}\b"),
        "<id>",
    ),
    (re.compile(r"\b\d{5,}\b"), "<id>"),
    (re.compile(r"\b\d+\b"), "<number>"),
)
_PARENS = re.compile(r"\([^()]*\)")
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A `field:value` term of a search expression (`created_at:><date>`, `status:open`), and a value that is the
# API's word rather than someone's: a lowercase term, not a name.
_TERM = re.compile(r"(?<![\w.<])([A-Za-z_][A-Za-z0-9_.]*):([<>=!]*?)(<[a-z_]+(?::[^<>\s]+)?>|[^\s\"'()<>,}\]]+)")
_WORD_VALUE = re.compile(r"[a-z][a-z0-9_\-]{0,39}")
_QUERY_WORDS = frozenset({"query", "mutation", "subscription", "fragment", "on", "true", "false", "null"})
_MAX_DEPTH = 4
_MAX_ITEMS = 16
_MAX_CONSTANT = 40
_CACHE = 4096
_CACHED_CHARS = 512


class Redactor:
    """The write gate applied to tool-call values and error texts. One per gate (`Redactor.of`)."""

    def __init__(self, gate: WriteGate) -> None:
        self.gate = gate.without("size", "empty", "unstable")
        # Arguments repeat (every call of a pattern has the same constants): each short text is judged once.
        self._cached = functools.lru_cache(maxsize=_CACHE)(self._refused)

    @classmethod
    def of(cls, gate: WriteGate) -> Redactor:
        found = _BY_GATE.get(gate)
        if found is None:
            found = _BY_GATE[gate] = cls(gate)
        return found

    @classmethod
    def default(cls) -> Redactor:
        return _default_redactor()

    def refused(self, text: str) -> str | None:
        """The id of the rule refusing `text`, or None if it may be kept."""
        # Long texts (documents passed as arguments) are rarely repeated: caching them would only hold memory.
        return self._cached(text) if len(text) <= _CACHED_CHARS else self._refused(text)

    def _refused(self, text: str) -> str | None:
        verdict = self.gate.check(text)
        if verdict.allowed or verdict.kind not in REDACTED_KINDS:
            return None
        return verdict.rule or str(verdict.kind)

    def refused_value(self, key: str, value: str) -> str | None:
        return self.refused(f"{key}: {value}" if key else value)

    def value(self, key: str, value: Any, depth: int = 0) -> Any:
        """`value` with every scalar the gate refuses replaced by ``<redacted:RULE>``."""
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str | int | float):
            rule = self.refused_value(key, str(value))
            return value if rule is None else f"<redacted:{rule}>"
        if depth >= _MAX_DEPTH:
            return "<nested>"
        if isinstance(value, Mapping):
            return {self._name(str(k)): self.value(str(k), v, depth + 1) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(key, v, depth + 1) for v in value]
        return f"<{type(value).__name__}>"

    def arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        out = self.value("", dict(arguments))
        assert isinstance(out, dict)
        return out

    def _name(self, name: str) -> str:
        rule = self.refused(name)
        return name if rule is None else f"<redacted:{rule}>"

    def text(self, text: str) -> str:
        """`text` with the words the gate refuses replaced; the whole text if it is refused as a whole."""
        if self.refused(text) is None:
            return text
        parts = _SPACE.split(text)
        previous = ""
        for i, part in enumerate(parts):
            if not part or part.isspace():
                continue
            # A word alone, or with the one before it: "password: hunter22" is refused for the pair. A word
            # already replaced gives no context, or the word after it would be refused for its sake.
            rule = self.refused(part) or (self.refused(f"{previous} {part}") if previous else None)
            previous = part if rule is None else ""
            if rule is not None:
                parts[i] = f"<redacted:{rule}>"
        cleaned = "".join(parts)
        rule = self.refused(cleaned)
        return cleaned if rule is None else f"<redacted:{rule}>"


_BY_GATE: WeakKeyDictionary[WriteGate, Redactor] = WeakKeyDictionary()


@functools.cache
def _default_redactor() -> Redactor:
    return Redactor(WriteGate())


def schema_constants(schema: Mapping[str, Any]) -> frozenset[str]:
    """The string values a tool's input schema declares (`enum`, `const`): the API's vocabulary."""
    found: set[str] = set()

    def walk(node: Any, depth: int) -> None:
        if depth > 12:
            return
        if isinstance(node, Mapping):
            for key, value in node.items():
                if key == "enum" and isinstance(value, list):
                    found.update(v for v in value if isinstance(v, str))
                elif key == "const" and isinstance(value, str):
                    found.add(value)
                else:
                    walk(value, depth + 1)
        elif isinstance(node, list):
            for item in node:
                walk(item, depth + 1)

    walk(schema, 0)
    return frozenset(v for v in found if 0 < len(v) <= 100)


def query_like(text: str) -> bool:
    """Whether `text` reads as a query in a query language rather than as someone's words."""
    if not 3 <= len(text) <= _MAX_QUERY or _PLACEHOLDER.fullmatch(text):
        return False
    if _BRACES.search(text) or _SQL.match(text):
        return True
    terms = text.split()
    return bool(terms) and all(_SEARCH_TERM.fullmatch(t) for t in terms) and any(":" in t for t in terms)


def parameterise(text: str) -> str:
    """`text` with its literal values replaced by placeholders: dates, ids, amounts and numbers, then every
    quoted string and `field:value` value that is not the API's own word (a lowercase term such as `open`, an
    UPPER_SNAKE constant) — `name:'Alice Liddell'` is someone's data, which no gate can tell from a status."""
    parts = _TOKEN.split(text)
    for i in range(0, len(parts), 2):  # odd parts are placeholders already
        for pattern, placeholder in _LITERALS:
            parts[i] = pattern.sub(placeholder, parts[i])
    return _TERM.sub(_term, _QUOTED.sub(_quoted, "".join(parts)))


def _kept_value(value: str) -> bool:
    return bool(_TOKEN.fullmatch(value) or _constant(value) or _WORD_VALUE.fullmatch(value))


def _quoted(match: re.Match[str]) -> str:
    quote, inner = match.group(0)[0], match.group(0)[1:-1]
    if _kept_value(inner) or (inner and query_like(inner)):
        return match.group(0)  # a search expression inside is reduced by `_term` like any other
    return f"{quote}<text>{quote}"


def _term(match: re.Match[str]) -> str:
    field, operator, value = match.groups()
    return match.group(0) if _kept_value(value) else f"{field}:{operator}<text>"


def query_fields(text: str) -> list[str]:
    """The field names a query selects (the identifiers inside its braces, arguments left out)."""
    if "{" not in text:
        return []
    body = _QUOTED.sub(" ", text[text.index("{") :])
    while True:
        reduced = _PARENS.sub(" ", body)
        if reduced == body:
            break
        body = reduced
    seen: dict[str, None] = {}
    for name in _FIELD.findall(_TOKEN.sub(" ", body)):
        if name not in _QUERY_WORDS:
            seen.setdefault(name, None)
    return list(seen)


def _constant(value: str) -> bool:
    """An UPPER_SNAKE constant, not a record id: `BEST_SELLING`, `UTF8`, but not `A7` or `ORD12345`."""
    if len(value) > _MAX_CONSTANT or not _CONSTANT.fullmatch(value):
        return False
    digits = sum(c.isdigit() for c in value)
    return digits <= 2 and len(value) - digits - value.count("_") >= 2


def _hash(value: Any, size: int) -> str:
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=size).hexdigest()


class Shaper:
    """A call's shape for shared rows, its signature and failure fingerprint (see the module docstring).

    `redactor` None keeps no constant at all (nothing can be checked); `key_params` names, per tool, the
    arguments that identify a call pattern; `constants` holds, per tool, its schema's declared values.
    """

    def __init__(
        self,
        redactor: Redactor | None,
        key_params: Mapping[str, Sequence[str]] | None = None,
        constants: Mapping[str, frozenset[str]] | None = None,
    ) -> None:
        self.redactor = redactor
        self.key_params = key_params or {}
        self.constants = constants or {}

    def __call__(self, tool: str, params: Mapping[str, Any]) -> dict[str, Any]:
        return self.shape(tool, params)

    def _allowed(self, key: str, value: str) -> bool:
        return self.redactor is not None and self.redactor.refused_value(key, value) is None

    def _string(self, key: str, value: str, known: frozenset[str], named: bool) -> str:
        if _PLACEHOLDER.fullmatch(value):
            return value
        vocabulary = value in known or _constant(value) or (named and bool(_IDENTIFIER.fullmatch(value)))
        if vocabulary and self._allowed(key, value):
            return value
        if self.redactor is not None and query_like(value):
            # Literals out first: a timestamp or an order number reads as password-shaped to the gate, and only
            # removing them cannot let a secret through; the gate then judges what is left.
            return self.redactor.text(parameterise(value))
        return "<text>"

    def _name(self, name: str) -> str:
        if _PLACEHOLDER.fullmatch(name):
            return name
        # Without a gate an identifier-like argument name is still kept: the schema's, not the user's.
        if _NAME.fullmatch(name) and (self.redactor is None or self._allowed("", name)):
            return name
        return "<name>"

    def _shape(self, key: str, value: Any, known: frozenset[str], depth: int, named: bool = False) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int | float):
            return "<number>"
        if isinstance(value, str):
            return self._string(key, value, known, named)
        if depth >= _MAX_DEPTH:
            return "<nested>"
        if isinstance(value, Mapping):
            items = sorted(value.items(), key=lambda kv: str(kv[0]))
            return {self._name(str(k)): self._shape(str(k), v, known, depth + 1) for k, v in items}
        if isinstance(value, list | tuple):
            shapes = [self._shape(key, v, known, depth + 1) for v in value[:_MAX_ITEMS]]
            # Order inside a list of enum values rarely matters to whether a call works.
            return sorted(shapes, key=lambda s: json.dumps(s, sort_keys=True, default=str))
        return f"<{type(value).__name__}>"

    def shape(self, tool: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """What a shared row keeps of a call: names, value types, the API's own constants."""
        known = self.constants.get(tool, frozenset())
        named = set(self.key_params.get(tool, ()))
        return {
            self._name(str(k)): self._shape(str(k), v, known, 1, named=str(k) in named)
            for k, v in sorted(params.items(), key=lambda kv: str(kv[0]))
        }

    def identity(self, tool: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """The part of the shape that identifies a call pattern: the key parameters if the app named them."""
        shape = self.shape(tool, params)
        keys = self.key_params.get(tool)
        return shape if keys is None else {k: shape.get(self._name(k)) for k in keys}

    def signature(self, tool: str, params: Mapping[str, Any]) -> str:
        return _hash(self.identity(tool, params), 8)

    def fingerprint(self, error_type: str, tool: str, params: Mapping[str, Any]) -> str:
        return _hash({"error_type": error_type, "tool": tool, "params": self.identity(tool, params)}, 12)


def types_only(tool: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """A shape that keeps no value at all: what a backend stores when it is given no better shaper."""
    return Shaper(None).shape(tool, params)
