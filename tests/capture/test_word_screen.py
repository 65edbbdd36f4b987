"""The time patterns' screen (`word_screen`) changes no answer: a text it turns away is one no pattern matches.

Texts from the pattern tables themselves (every word, in any case, between other words, glued to letters,
digits and punctuation), the time table's expressions, and the bench corpus; `_first` (screened) against the
patterns searched unscreened."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from learnloop.capture import timing
from learnloop.capture.word_screen import WordScreen
from tests.capture.test_timing import TABLE

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from corpus import learnings, questions

_TABLE_WORDS = [
    *timing._DAYS,
    *timing._UNITS,
    *timing._SEASONS,
    *timing._WEEKDAYS,
    *timing._MONTHS,
    *(w for w in re.split(r"[^\w']+", timing._COUNT + timing._LAST + timing._THIS + timing._NEXT) if w),
    "ago",
    "back",
    "earlier",
    "hace",
    "vor",
    "il y a",
    "in",
    "en",
    "dans",
    "on",
    "el",
    "la",
    "le",
    "l'",
    "im",
    "since",
    "durante",
    "pasado",
    "pasada",
    "que viene",
    "dernier",
    "dernière",
    "prochain",
    "prochaine",
    "passé",
    "of",
    "de",
    "this",
    "the",
]
_FILLER = ["the", "a", "an", "brew", "elaño", "weekly", "mayo", "ok", "Ekim", "kasım", "KASIM", "ſunday", "x"]
_GLUE = [" ", "  ", ", ", "-", "'", ".", "_", "/", "\n", "", "é", "1", "2023", "03/05/2023", "3rd"]


def _same(text: str) -> None:
    screened, searched = timing._first(text), timing._first_of_patterns(text)
    assert (screened is None) == (searched is None), text
    if screened is not None and searched is not None:
        assert (screened.kind, screened.match.span()) == (searched.kind, searched.match.span()), text


def _cased(word: str, how: int) -> str:
    return (word, word.upper(), word.title(), word.swapcase())[how]


@settings(max_examples=600, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_TABLE_WORDS + _FILLER), st.integers(0, 3), st.sampled_from(_GLUE)),
        min_size=1,
        max_size=6,
    )
)
def test_texts_made_of_the_patterns_words_get_the_same_answer(parts: list[tuple[str, int, str]]) -> None:
    _same("".join(_cased(word, how) + glue for word, how, glue in parts))


def test_the_time_tables_expressions_and_the_bench_corpus_get_the_same_answer() -> None:
    texts = [expression for expression, _ in TABLE]
    texts += [f"What did I do {expression}?" for expression, _ in TABLE]
    texts += learnings(3000, seed=1) + questions(600, seed=3)
    for text in texts:
        _same(text)
    screen = timing._screen()
    turned_away = sum(not screen.may_match(text) for text in texts)
    assert turned_away > len(texts) // 3, "most questions name no time: the screen spares them the patterns"


def test_the_screen_requires_whole_words_only_of_ascii_text() -> None:
    screen = WordScreen(["this morning", "week-end", "mañana", "kasım"])
    assert screen.may_match("see you THIS MORNING") and screen.may_match("a week-end away")
    assert screen.may_match("KASIM"), "dotless i matches i under IGNORECASE"
    assert not screen.may_match("mornings are slow") and not screen.may_match("the weekly report")
    assert screen.may_match("mañana no") and screen.may_match("día 3"), "text that is not ASCII: the patterns decide"
    assert screen.may_match("in 2 weeks"), "a digit"
