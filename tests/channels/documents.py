"""Generated Markdown documents and independent checks of what a channel made of them (for the property tests).

The checks do not use learnloop's renderers: Telegram and web parts are re-read with `html.parser`, WhatsApp
parts with a small scanner of WhatsApp's markers, and the document's own text comes from markdown-it's tokens.
"""

from __future__ import annotations

from html.parser import HTMLParser
from random import Random

from hypothesis import strategies as st
from markdown_it import MarkdownIt

PLAIN = "abcxyzABC0123456789éßж中文字。！？😀👍🏽.,!?:;'\"()&<>=+-#/"
# WhatsApp has no escape for its markers; the documents for it leave them (and quote '>') out of the text.
WHATSAPP_PLAIN = "abcxyzABC0123456789éßж中文字。！？😀👍🏽.,!?:;'\"()&=+-#/"
DECORATION = set("•◦—|.0123456789")
POOL = (
    'the mash temperature is 67 °C . , ! ? end. Done! Really? (aside) "quoted" it\'s a&b <tag> x<y 5>3 '
    "naïve café Straße жизнь 中文 字。 句子！ 问题？ 😀 👍🏽 👨‍👩‍👧 e=mc² 1. 2) - + # #tag a/b"
).split(" ")


def documents(alphabet: str = PLAIN) -> st.SearchStrategy[str]:
    """Markdown documents built from a Hypothesis-drawn seed: one draw per document keeps thousands of them
    quick to generate (a strategy per word, or `st.randoms`, costs 20-30 ms a document here), at the price of
    shrinking; a failure prints the seed, and the document in the assertion."""
    return st.integers(0, 2**32 - 1).map(lambda seed: _Writer(Random(seed), alphabet).document())


class _Writer:
    def __init__(self, rng: Random, alphabet: str) -> None:
        self.rng = rng
        self.alphabet = alphabet
        self.pool = [w for w in POOL if all(c in alphabet for c in w)]

    def document(self) -> str:
        return "\n\n".join(self.block() for _ in range(self.rng.randint(1, 6)))

    def word(self) -> str:
        roll = self.rng.random()
        if roll < 0.75:
            return self.rng.choice(self.pool)
        if roll < 0.95:
            return "".join(self.rng.choice(self.alphabet) for _ in range(self.rng.randint(1, 10)))
        return self.rng.choice(["a" * 50, "中" * 45, "😀" * 30, "x" * 120 + "y" * 40, "longword" * 9])

    def plain(self) -> str:
        return " ".join(self.word() for _ in range(self.rng.randint(1, 6)))

    def inline(self, depth: int = 2) -> str:
        spans = []
        for _ in range(self.rng.randint(1, 3)):
            kind = self.rng.choice(["plain", "plain", "bold", "italic", "strike", "code", "link"]) if depth else "plain"
            if kind == "plain":
                spans.append(self.plain())
            elif kind == "code":
                spans.append("`" + ("".join(self.rng.choice("abc xyz=+();") for _ in range(8)).strip() or "x") + "`")
            elif kind == "link":
                path = "".join(self.rng.choice("abcde") for _ in range(self.rng.randint(0, 5)))
                spans.append(f"[{self.inline(depth - 1)}](https://e.co/{path})")
            else:
                marker = {"bold": "**", "italic": "*", "strike": "~~"}[kind]
                spans.append(f"{marker}{self.inline(depth - 1)}{marker}")
        return " ".join(spans)

    def code_line(self) -> str:
        return "".join(self.rng.choice("abc xyz=+();{}") for _ in range(self.rng.randint(0, 50)))

    def block(self) -> str:
        rng = self.rng
        kind = rng.choice(["para", "para", "lines", "heading", "bullets", "numbers", "nested", "code", "quote", "hr"])
        if kind == "para":
            return self.inline()
        if kind == "code":
            language = rng.choice(["", "python", "js"])
            return f"```{language}\n" + "\n".join(self.code_line() for _ in range(rng.randint(1, 8))) + "\n```"
        if kind == "hr":
            return "---"
        items = [self.inline() for _ in range(rng.randint(1, 4))]
        if kind == "lines":
            return "\n".join(items)
        if kind == "heading":
            return "#" * rng.randint(1, 3) + " " + items[0]
        if kind == "bullets":
            return "\n".join(f"- {x}" for x in items)
        if kind == "numbers":
            return "\n".join(f"{n + 1}. {x}" for n, x in enumerate(items))
        if kind == "nested":
            return "\n".join([f"- {items[0]}", *(f"  - {x}" for x in items[1:])])
        return "\n>\n".join(f"> {x}" for x in items[:3])  # a quote


_READER = MarkdownIt("commonmark", {"html": False}).enable(["strikethrough", "table"])


def document_text(markdown: str) -> str:
    """The document's own characters, whitespace removed: what no part may lose."""
    out: list[str] = []
    for token in _READER.parse(markdown):
        if token.type in ("fence", "code_block"):
            out.append(token.content)
        for child in token.children or []:
            if child.type in ("text", "code_inline", "image"):
                out.append(child.content)
    return _squeeze("".join(out))


def _squeeze(text: str) -> str:
    return "".join(text.split())


def assert_text_kept(expected: str, parts_text: str, extra: set[str]) -> None:
    """`expected` is `parts_text` with only decoration (bullets, numbers, markers, link targets) added."""
    actual = _squeeze(parts_text)
    position = 0
    for char in actual:
        if position < len(expected) and char == expected[position]:
            position += 1
        else:
            assert char in extra, f"unexpected {char!r} at {actual.index(char)} in {actual[:200]!r}"
    assert position == len(expected), f"lost text after {expected[:position][-40:]!r}: {expected[position:][:80]!r}"


class TagChecker(HTMLParser):
    """Re-reads an HTML part: tags balanced, only the allowed ones, their attributes, Telegram's nesting rules."""

    def __init__(
        self, allowed: dict[str, set[str]], exclusive: frozenset[str] = frozenset(), void: frozenset[str] = frozenset()
    ) -> None:
        super().__init__(convert_charrefs=True)
        self.allowed, self.exclusive, self.void = allowed, exclusive, void
        self.stack: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        assert tag in self.allowed, f"tag {tag} not allowed"
        for name, value in attrs:
            assert name in self.allowed[tag], f"attribute {name} on {tag}"
            if name == "href":
                assert (value or "").startswith(("http://", "https://", "mailto:", "tg://")), value
            if name == "class":
                assert (value or "").startswith("language-"), value
        if tag in self.void:
            return
        in_code = [t for t in self.stack if t in ("code", "pre")]
        assert not in_code or (in_code == ["pre"] and tag == "code" and self.stack[-1] == "pre"), f"{tag} in code"
        if tag in self.exclusive:
            inside = [t for t in self.stack if t in self.exclusive]
            assert not inside or (inside == ["pre"] and tag == "code"), f"{tag} inside {inside}"
        self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.void:
            return
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack}"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def check(self, part: str) -> str:
        self.feed(part)
        self.close()
        assert not self.stack, f"left open: {self.stack}"
        return "".join(self.text)


def whatsapp_text(part: str) -> str:
    """Checks WhatsApp's markers pair up (at word edges, properly nested, none inside code) and returns the text."""
    text: list[str] = []
    stack: list[str] = []
    index = 0
    in_pre = in_code = False
    while index < len(part):
        if part.startswith("```", index):
            assert (not in_code and not stack) or in_pre, "code block opened inside a span"
            in_pre = not in_pre
            index += 3
            continue
        char = part[index]
        if in_pre:
            text.append(char)
        elif char == "`":
            in_code = not in_code
        elif in_code:
            text.append(char)
        elif char in "*_~":
            if stack and stack[-1] == char:
                assert index > 0 and not part[index - 1].isspace(), f"closing {char} after a space in {part!r}"
                stack.pop()
            else:
                assert char not in stack, f"{char} crosses another marker in {part!r}"
                after = part[index + 1 : index + 2]
                assert after and not after.isspace(), f"opening {char} before a space in {part!r}"
                stack.append(char)
        else:
            text.append(char)
        index += 1
    assert not in_pre and not in_code and not stack, f"unclosed {stack or 'code'} in {part!r}"
    return "".join(text)
