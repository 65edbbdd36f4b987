"""Each channel's markup, on examples: what is escaped, what nests, what WhatsApp and the web page get."""

from __future__ import annotations

from learnloop.channels.markups import TelegramHTML, WhatsAppMarkup
from learnloop.channels.splitting import format_markdown
from learnloop.channels.web import WebAdapter

from .documents import TagChecker
from .test_splitting import TELEGRAM_ENTITIES, TELEGRAM_TAGS


def test_telegram_counts_visible_utf16_units_and_escapes_the_rest() -> None:
    parts = format_markdown("a < b & **c** 😀", TelegramHTML(), 4096)
    assert parts == ["a &lt; b &amp; <b>c</b> 😀"]


def test_raw_html_and_unsafe_links_arrive_as_text() -> None:
    telegram = format_markdown('<script>alert(1)</script> [x](javascript:alert(1)) <b onclick="y">', TelegramHTML(), 0)
    assert telegram == ['&lt;script&gt;alert(1)&lt;/script&gt; [x](javascript:alert(1)) &lt;b onclick="y"&gt;']


def test_telegram_never_nests_what_it_cannot_show() -> None:
    [part] = format_markdown("> quote with `code` and [a **link**](https://e.co)", TelegramHTML(), 0)
    TagChecker(TELEGRAM_TAGS, TELEGRAM_ENTITIES).check(part)
    assert '<a href="https://e.co">a <b>link</b></a>' in part


def test_whatsapp_markup() -> None:
    [part] = format_markdown(
        "# Title\n\n**bold** *it* ~~gone~~ `x = 1` [site](https://e.co) <https://e.co/b>\n\n- one\n- two\n\n> said",
        WhatsAppMarkup(),
        0,
    )
    assert part == "*Title*\n\n*bold* _it_ ~gone~ `x = 1` site (https://e.co) https://e.co/b\n\n• one\n• two\n\n> said"


def test_web_page_is_sanitised_html() -> None:
    [page] = WebAdapter().format_response("# T\n\n<img src=x onerror=alert(1)> [x](https://e.co) **b**")
    assert "<h1>T</h1>" in page
    assert "onerror" not in page.replace("&lt;img src=x onerror=alert(1)&gt;", "")
    assert '<a href="https://e.co" rel="noopener noreferrer nofollow">x</a>' in page
