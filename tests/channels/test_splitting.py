"""Formatting and splitting, over thousands of generated Markdown documents: every part fits its channel's
limit as that platform measures it, every part's markup is balanced and allowed, and no text is lost."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from learnloop.channels.markups import TelegramHTML, WebHTML, WhatsAppMarkup, utf16_length
from learnloop.channels.splitting import format_markdown
from learnloop.channels.web import WebAdapter
from learnloop.errors import ConfigurationError

from .documents import (
    DECORATION,
    PLAIN,
    WHATSAPP_PLAIN,
    TagChecker,
    assert_text_kept,
    document_text,
    documents,
    whatsapp_text,
)

PROPERTY = settings(
    max_examples=800, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
TELEGRAM_TAGS = {t: set() for t in ("b", "i", "s", "u", "blockquote", "pre")} | {"a": {"href"}, "code": {"class"}}
TELEGRAM_ENTITIES = frozenset({"a", "code", "pre", "blockquote"})
WEB_TAGS = {t: set() for t in ("strong", "em", "del", "blockquote", "pre", "br")} | {
    "a": {"href", "rel"},
    "code": {"class"},
}


@PROPERTY
@given(documents(PLAIN), st.sampled_from([24, 40, 64, 120, 400, 4096]))
def test_telegram_parts_fit_balance_and_keep_the_text(markdown: str, limit: int) -> None:
    parts = format_markdown(markdown, TelegramHTML(), limit)
    seen = []
    for part in parts:
        text = TagChecker(TELEGRAM_TAGS, TELEGRAM_ENTITIES).check(part)
        assert utf16_length(text) <= limit, (limit, part)
        assert text.strip(), (part, markdown)
        seen.append(text)
    assert_text_kept(document_text(markdown), "".join(seen), DECORATION)


@PROPERTY
@given(documents(WHATSAPP_PLAIN), st.sampled_from([24, 40, 64, 120, 400, 4096]))
def test_whatsapp_parts_fit_pair_their_markers_and_keep_the_text(markdown: str, limit: int) -> None:
    parts = format_markdown(markdown, WhatsAppMarkup(), limit)
    seen = []
    for part in parts:
        assert utf16_length(part) <= limit, (limit, part)
        seen.append(whatsapp_text(part))
    links = set("()>:/ecoabd\u200b") | set("https://e.co/")
    assert_text_kept(document_text(markdown), "".join(seen), DECORATION | links)


@settings(max_examples=400, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(documents(PLAIN), st.sampled_from([160, 400, 2000]))
def test_web_parts_fit_are_sanitised_and_keep_the_text(markdown: str, limit: int) -> None:
    parts = WebAdapter(message_limit=limit).format_response(markdown)
    seen = []
    for part in parts:
        assert len(part) <= limit, (limit, part)
        seen.append(TagChecker(WEB_TAGS, void=frozenset({"br"})).check(part))
    assert_text_kept(document_text(markdown), "".join(seen), DECORATION)


def test_a_paragraph_break_is_preferred_to_a_sentence_end_and_a_sentence_end_to_a_space() -> None:
    first = "One two three four five six. Seven eight nine ten eleven twelve."
    parts = format_markdown(f"{first}\n\nThirteen fourteen fifteen.", TelegramHTML(), len(first) + 10)
    assert parts == [first, "Thirteen fourteen fifteen."]
    parts = format_markdown(first, TelegramHTML(), 40)
    assert parts == ["One two three four five six.", "Seven eight nine ten eleven twelve."]


def test_a_formatted_span_cut_in_two_is_closed_and_reopened() -> None:
    parts = format_markdown("**" + " ".join(["bold"] * 12) + "**", TelegramHTML(), 30)
    assert all(p.startswith("<b>") and p.endswith("</b>") for p in parts)
    assert len(parts) == 2


def test_a_code_block_is_split_by_lines_and_refenced() -> None:
    code = "\n".join(f"line_{n} = {n}" for n in range(10))
    telegram = format_markdown(f"```python\n{code}\n```", TelegramHTML(), 40)
    assert len(telegram) > 1
    assert all(p.startswith('<pre><code class="language-python">') and p.endswith("</code></pre>") for p in telegram)
    assert "\n".join(p.removeprefix('<pre><code class="language-python">')[:-13] for p in telegram) == code
    whatsapp = format_markdown(f"```\n{code}\n```", WhatsAppMarkup(), 40)
    assert all(p.startswith("```") and p.endswith("```") for p in whatsapp)


def test_only_a_single_over_long_word_is_hard_split_between_code_points() -> None:
    parts = format_markdown("short " + "😀" * 30 + " end", TelegramHTML(), 20)  # an emoji is 2 UTF-16 units
    assert parts == ["short", "😀" * 10, "😀" * 10, "😀" * 10, "end"]
    assert format_markdown("a **" + "x" * 30 + "** b", WhatsAppMarkup(), 12) == ["a", *["*" + "x" * 10 + "*"] * 3, "b"]


def test_an_empty_answer_has_no_parts_and_a_limit_too_small_for_a_character_is_refused() -> None:
    assert format_markdown("   \n\n", TelegramHTML(), 4096) == []
    with pytest.raises(ConfigurationError):
        format_markdown("😀", TelegramHTML(), 1)  # two UTF-16 code units
    assert format_markdown("**b** `c`", WebHTML(), 1) == ["b", "c"]  # the tags go before the text does


def test_a_word_made_of_two_spans_moves_whole_to_the_next_part_when_it_fits_there() -> None:
    parts = format_markdown("a " + "**" + "b" * 10 + "**" + "c" * 10, TelegramHTML(), 20)  # the word is 20
    assert parts == ["a", "<b>" + "b" * 10 + "</b>" + "c" * 10]
