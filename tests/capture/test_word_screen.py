"""The time patterns' screens (`word_screen`) change no answer: a pattern skipped for a text cannot match it.

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
from learnloop.capture.word_screen import TextWords, WordScreen
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
_FILLER += ["gennaio", "januari", "maart", "de", "2023-05-03", "5.3.2023", "12/3", "20", "19", "2x", "1st"]
_GLUE = [" ", "  ", ", ", "-", "'", ".", "_", "/", "\n", "", "é", "1", "2023", "03/05/2023", "3rd", "12", "1999", "7."]


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
    screens = timing._screens()
    assert len(screens) == len(timing._patterns())
    searched = sum(screen.may_match(TextWords.of(text)) for text in texts for screen in screens)
    assert searched < len(texts) * len(screens) // 3, "most texts name no time: the screens spare most searches"


def test_a_screen_requires_whole_words_only_of_ascii_text() -> None:
    screen = WordScreen(["this morning", "week-end", "mañana", "kasım"])

    def passes(text: str) -> bool:
        return screen.may_match(TextWords.of(text))

    assert passes("see you THIS MORNING") and passes("a week-end away")
    assert passes("KASIM"), "dotless i matches i under IGNORECASE"
    assert not passes("mornings are slow") and not passes("the weekly report")
    assert passes("mañana no") and passes("día 3"), "text that is not ASCII: the patterns decide"
    assert not passes("in 2 weeks"), "a digit is not one of the words"
    dated = WordScreen(["may"], shape=r"[0-9][./-][0-9]")
    assert dated.may_match(TextWords.of("on 3/5")) and dated.may_match(TextWords.of("3 May"))
    assert not dated.may_match(TextWords.of("a 15 minute boil")) and not dated.may_match(TextWords.of("3 - 5"))
