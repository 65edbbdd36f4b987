"""The three markups an answer is rendered in: Telegram's HTML subset, WhatsApp's markup and web HTML.

Sizes are what each platform counts: Telegram limits a message to 4,096 characters *after entity parsing*,
so tags are free and text counts in UTF-16 code units (the unit of its entity offsets: an emoji outside the
Basic Multilingual Plane counts 2); a WhatsApp text body counts everything in it, markers included (counted
here in UTF-16 code units too, the stricter reading); web HTML counts its characters.
"""

from __future__ import annotations

import html
from typing import Final

from .document import Atom, Mark

__all__ = ["LINK_REL", "TelegramHTML", "WebHTML", "WhatsAppMarkup", "utf16_length"]

LINK_REL: Final = "noopener noreferrer nofollow"

_STYLES: Final = frozenset({"bold", "italic", "strike"})
# one consistent nesting order, so a mark set always renders the same way
_ORDER: Final = {"quote": 0, "link": 1, "autolink": 1, "bold": 2, "italic": 3, "strike": 4, "code": 5, "pre": 6}


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _ordered(marks: tuple[Mark, ...]) -> tuple[Mark, ...]:
    return tuple(sorted(dict.fromkeys(marks), key=lambda m: _ORDER[m.kind]))


class TelegramHTML:
    """Bot API `parse_mode: HTML`: b, i, s, code, pre (with a language class), a href, blockquote.

    Telegram's nesting rules: bold, italic and strikethrough go anywhere except inside code and pre; links,
    code, pre and blockquotes never contain one another. Where a span holds two of those, the innermost
    meaning is kept: code blocks, then links (a target is worth more than a font), then code, then quotes.
    """

    _TAGS: Final = {"bold": "b", "italic": "i", "strike": "s", "code": "code", "quote": "blockquote"}
    _PRIORITY: Final = ("pre", "link", "autolink", "code", "quote")

    def marks(self, atom: Atom) -> tuple[Mark, ...]:
        marks = _ordered(atom.marks)
        entity = next((m for kind in self._PRIORITY for m in marks if m.kind == kind), None)
        if entity is not None and entity.kind in ("pre", "code"):
            return (entity,)
        styles = tuple(m for m in marks if m.kind in _STYLES)
        return _ordered((entity, *styles)) if entity is not None else styles

    def open(self, mark: Mark) -> str:
        if mark.kind in ("link", "autolink"):
            return f'<a href="{html.escape(mark.value, quote=True)}">'
        if mark.kind == "pre":
            return f'<pre><code class="language-{mark.value}">' if mark.value else "<pre>"
        return f"<{self._TAGS[mark.kind]}>"

    def close(self, mark: Mark) -> str:
        if mark.kind in ("link", "autolink"):
            return "</a>"
        if mark.kind == "pre":
            return "</code></pre>" if mark.value else "</pre>"
        return f"</{self._TAGS[mark.kind]}>"

    def text(self, text: str, marks: tuple[Mark, ...]) -> str:
        return html.escape(text, quote=False)

    def text_size(self, text: str, marks: tuple[Mark, ...]) -> int:
        return utf16_length(text)

    def tag_size(self, tag: str) -> int:
        return 0


class WhatsAppMarkup:
    """WhatsApp: *bold*, _italic_, ~strike~, `inline code`, ```code blocks```, "> " quotes; links as text.

    WhatsApp reads a marker only at a word's edge: a span never starts or ends in whitespace (the splitter
    sees to that for every channel, and a part never starts or ends in whitespace); code spans hold no other marker,
    and a code block leaves its quote (quote prefixes inside code would change the code). WhatsApp has no
    escape character: a literal `*` or `_` in the text stays as it is, and a backtick inside code is wrapped
    in zero-width spaces (so it cannot join a fence).
    """

    _MARKERS: Final = {"bold": "*", "italic": "_", "strike": "~", "code": "`", "pre": "```"}

    def marks(self, atom: Atom) -> tuple[Mark, ...]:
        marks = _ordered(atom.marks)
        if any(m.kind == "pre" for m in marks):
            return tuple(m for m in marks if m.kind == "pre")
        if any(m.kind == "code" for m in marks):
            if "`" in atom.text:  # a backtick would end an inline code span; a code block can hold one
                return (*(m for m in marks if m.kind in ("link", "autolink")), Mark("pre"))
            return tuple(m for m in marks if m.kind not in _STYLES)
        return marks

    def open(self, mark: Mark) -> str:
        if mark.kind == "quote":
            return "> "
        return self._MARKERS.get(mark.kind, "")

    def close(self, mark: Mark) -> str:
        if mark.kind == "link":
            return f" ({mark.value})" if mark.value else ""
        if mark.kind in ("quote", "autolink"):
            return ""  # WhatsApp shows a bare URL as a link by itself
        return self._MARKERS[mark.kind]

    def text(self, text: str, marks: tuple[Mark, ...]) -> str:
        if any(m.kind == "pre" for m in marks):
            # zero-width spaces keep a backtick in code from joining the fence into four
            return text.replace("`", "\u200b`\u200b")
        if any(m.kind == "quote" for m in marks):
            return text.replace("\n", "\n> ")
        return text

    def text_size(self, text: str, marks: tuple[Mark, ...]) -> int:
        return utf16_length(self.text(text, marks))

    def tag_size(self, tag: str) -> int:
        return utf16_length(tag)


class WebHTML:
    """HTML for a web page: strong, em, del, code, pre, a (http, https, mailto), blockquote, br.

    The output is also passed through the nh3 sanitiser (the Ammonia library) with the same allow-list, so
    the page gets safe HTML even if this renderer had a bug.
    """

    _TAGS: Final = {"bold": "strong", "italic": "em", "strike": "del", "code": "code", "quote": "blockquote"}

    def marks(self, atom: Atom) -> tuple[Mark, ...]:
        marks = _ordered(atom.marks)
        if any(m.kind in ("pre", "code") for m in marks):
            return tuple(m for m in marks if m.kind not in _STYLES)
        return marks

    def open(self, mark: Mark) -> str:
        if mark.kind in ("link", "autolink"):
            # rel as the sanitiser writes it, so sanitising does not change a part's size
            return f'<a href="{_attribute(mark.value)}" rel="{LINK_REL}">'
        if mark.kind == "pre":
            return f'<pre><code class="language-{mark.value}">' if mark.value else "<pre><code>"
        return f"<{self._TAGS[mark.kind]}>"

    def close(self, mark: Mark) -> str:
        if mark.kind in ("link", "autolink"):
            return "</a>"
        if mark.kind == "pre":
            return "</code></pre>"
        return f"</{self._TAGS[mark.kind]}>"

    def text(self, text: str, marks: tuple[Mark, ...]) -> str:
        # escaped the way the sanitiser serialises text, so sanitising does not change a part's size
        escaped = html.escape(text, quote=False).replace("\xa0", "&nbsp;")
        if any(m.kind == "pre" for m in marks):
            return escaped
        return escaped.replace("\n", "<br>\n")

    def text_size(self, text: str, marks: tuple[Mark, ...]) -> int:
        return len(self.text(text, marks))

    def tag_size(self, tag: str) -> int:
        return len(tag)


def _attribute(value: str) -> str:
    return html.escape(value, quote=True).replace("&#x27;", "'").replace("\xa0", "&nbsp;")
