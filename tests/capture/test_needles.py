"""The gate's one-pass needle search: needles read from patterns, and `Folded` matching as `re.IGNORECASE` does."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import learnloop.capture as capture
from learnloop.capture.gate import WriteGate, _needles_of
from learnloop.capture.gate_rule import normalize, word_set
from learnloop.capture.needles import Folded, NeedleIndex, literal_needles, needle_groups

CORPORA = Path(__file__).parent / "corpora"


def _texts() -> list[str]:
    lines = []
    for name in ("benign.txt", "secrets_pii.txt", "injections.txt", "unstable.txt", "dated.txt"):
        lines += [line for line in (CORPORA / name).read_text("utf-8").splitlines() if line.strip()]
    return [normalize(line) for line in lines]


TEXTS = _texts()


@pytest.mark.parametrize(
    ("pattern", "needles"),
    [
        (r"diagnosed with|cancer", ("cancer", "diagnosed with")),
        (r"\bhiv\b|\bpin code", (" hiv ", "pin code")),  # a boundary marks single words only
        (r"leuka?emia", ("leuk",)),  # "leuk" and "emia" are both required: either filters
        (r"chemo\w*|on (?:lithium|insulin)", ("chemo", "insulin", "lithium")),
        (r"\b(?:nin|tin)\b", (" nin ", " tin ")),
        (r"(?i)PassWord", ("password",)),
        (r"a|b", ()),  # one-letter needles are in every text: no filter
        (r"x(?:yz|)", ()),  # an empty branch: the x alone is one letter
        (r"\d{4}", ()),
        (r"[", ()),  # not a pattern `re` reads
    ],
)
def test_literal_needles(pattern: str, needles: tuple[str, ...]) -> None:
    assert literal_needles(pattern) == tuple(sorted(needles))


def test_needle_groups_name_every_required_part_best_first() -> None:
    groups = needle_groups(r"\b(?:tell|inform) the customer\b.{0,40}\b(?:is fine|is safe)\b")
    # (the parser reads "is fine|is safe" as "is " then "fine|safe")
    assert groups == ((" the customer",), (" inform", " tell"), ("fine ", "safe "), ("is ",))
    assert needle_groups(r"a.{0,9}(?:bc|de)") == (("bc", "de"),)  # "a" alone filters nothing: dropped
    assert needle_groups(r"leuka?emia") == (("leuk",), ("emia",))


def test_whole_word_needles_are_found_in_the_word_view() -> None:
    index = NeedleIndex([" hiv ", "cancer"])
    assert index.present("tested hiv-positive in 2019") == {" hiv "}
    assert index.present("the archive moved") == frozenset()  # "hiv" inside a word is not the word
    assert index.holds_any("a cancer screening")
    assert not index.holds_any("nothing here")


def _gate_patterns() -> list[tuple[str, re.Pattern[str], tuple[tuple[str, ...], ...], tuple[str, ...], str]]:
    gate = WriteGate()
    found = []
    for rule in gate.rules:
        needles, also = _needles_of(rule)
        if rule.finder is None and rule.target != "compact" and needles and "" not in needles:
            found.append((rule.id, rule.regex, (needles, *also), rule.words, rule.target))
    return found


@pytest.mark.parametrize(("rule_id", "regex", "groups", "words", "target"), _gate_patterns(), ids=lambda v: str(v)[:40])
def test_a_rule_skipped_for_want_of_needles_would_not_have_matched(
    rule_id: str, regex: re.Pattern[str], groups: tuple[tuple[str, ...], ...], words: tuple[str, ...], target: str
) -> None:
    indexes = [NeedleIndex(needles) for needles in groups]
    for text in TEXTS:
        lower = text.lower()
        view = {"text": text, "lower": lower, "raw": text}[target]
        if regex.search(view) is None:
            continue
        hay = lower if len(lower) == len(text) else lower.replace("\u0307", "")
        if not word_set(lower).isdisjoint(words):
            continue
        for index in indexes:  # one needle of every group is there
            assert index.holds_any(hay), (rule_id, text)


def _folded() -> list[tuple[str, Folded]]:
    found = []
    for module in pkgutil.iter_modules(capture.__path__):
        for name, value in vars(importlib.import_module(f"learnloop.capture.{module.name}")).items():
            values = list(value.values()) if isinstance(value, dict) else [value]
            found += [(f"{module.name}.{name}", v) for v in values if isinstance(v, Folded)]
    return found


@pytest.mark.parametrize(("name", "folded"), _folded(), ids=lambda v: v if isinstance(v, str) else "")
def test_folded_patterns_match_where_ignoring_case_does(name: str, folded: Folded) -> None:
    for text in [*TEXTS, "ŞİFRE: Kx7#vLq2pW9z", "MOT DE PASSE : Hunter22!", "THE SEED PHRASE IS"]:
        expected = [m.span() for m in folded.pattern.finditer(text)]
        assert [m.span() for m in folded.finditer(text)] == expected, (name, text)
        first = folded.search(text)
        assert (first.span() if first else None) == (expected[0] if expected else None), (name, text)


def test_folded_is_used() -> None:
    assert len(_folded()) >= 9
