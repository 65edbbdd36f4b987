"""Canonical Markdown read with markdown-it-py into a flat run of atoms that every channel renders and splits.

An atom is a word, a stretch of whitespace or a piece of decoration (a list bullet), with the formatting marks
that cover it (outermost first). Block structure becomes text: paragraphs are separated by a blank line, list
items by a line break with a bullet or number, headings are bold lines, tables are lines of cells. Splitting
works on atoms, never on rendered markup, so a cut can only fall between atoms and each part is rendered on
its own with every mark opened and closed inside it.

Each atom records how good a place the gap after it is for a cut (`Cut`): a paragraph break beats a line
break, which beats a sentence end, which beats a space; two adjacent words (`**bold**er`) may only be cut when
nothing better fits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = ["Atom", "Cut", "Mark", "MarkKind", "read_markdown"]

MarkKind = Literal["bold", "italic", "strike", "code", "link", "autolink", "pre", "quote"]


class Cut(IntEnum):
    NEVER = 0  # inside a word: only when nothing else fits
    WORD = 1
    SENTENCE = 2
    LINE = 3
    PARAGRAPH = 4


@dataclass(frozen=True)
class Mark:
    kind: MarkKind
    value: str = ""  # a link's href, a code block's language


@dataclass(frozen=True)
class Atom:
    text: str
    marks: tuple[Mark, ...]
    cut: Cut  # the gap after this atom
    space: bool  # whitespace a part may drop at its edges


# html off: raw HTML in an answer is shown as text, never passed through to a platform.
_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["strikethrough", "table"])
_SAFE_SCHEMES = ("http://", "https://", "mailto:", "tg://")
# Words, runs of blanks, line breaks; CJK sentence punctuation ends a word so a cut may follow it.
_TOKENS = re.compile(r"\n\n+|\n|[^\S\n]+|[^\s。！？]+[。！？]*|[。！？]+")
_SENTENCE_END = re.compile(r"[.!?…。！？][\"'”’)\]]*$")
_STYLE: dict[str, MarkKind] = {"strong_open": "bold", "em_open": "italic", "s_open": "strike"}
_BLOCK_STARTS = frozenset(
    {"paragraph_open", "heading_open", "blockquote_open", "hr", "fence", "code_block", "table_open"}
)
_LIST_OPENS = frozenset({"bullet_list_open", "ordered_list_open"})
_STYLE_CLOSE = {"strong_close": "bold", "em_close": "italic", "s_close": "strike"}


def read_markdown(markdown: str) -> list[Atom]:
    """The atoms of a Markdown document, whitespace trimmed at both ends."""
    builder = _Builder()
    builder.blocks(_PARSER.parse(markdown))
    atoms = builder.atoms
    while atoms and atoms[-1].space:
        atoms.pop()
    start = 0
    while start < len(atoms) and atoms[start].space:
        start += 1
    return atoms[start:]


def safe_href(href: str) -> bool:
    return href.lower().startswith(_SAFE_SCHEMES)


class _Builder:
    def __init__(self) -> None:
        self.atoms: list[Atom] = []
        self._quote_depth = 0
        self._heading = False
        self._lists: list[list[int]] = []  # per open list: [next number], or [] for bullets
        self._pending_bullet: str | None = None
        self._cells = 0

    @property
    def _quotes(self) -> tuple[Mark, ...]:
        return (Mark("quote"),) if self._quote_depth else ()

    def blocks(self, tokens: Sequence[Token]) -> None:
        for token in tokens:
            kind = token.type
            if kind in _BLOCK_STARTS or (kind in _LIST_OPENS and not self._lists):
                self._block_gap()
            if kind in ("fence", "code_block", "hr", "table_open"):
                self._bullet(self._quotes)
            if kind == "blockquote_open":
                self._quote_depth += 1
            elif kind == "blockquote_close":
                self._quote_depth -= 1
            elif kind in ("heading_open", "heading_close"):
                self._heading = kind == "heading_open"
            elif kind in _LIST_OPENS:
                self._lists.append([_list_start(token)] if kind == "ordered_list_open" else [])
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self._lists.pop()
            elif kind == "list_item_open":
                self._list_item()
            elif kind == "inline":
                self._inline(token.children or [], bold=self._heading)
            elif kind in ("fence", "code_block"):
                self._code_block(token.content, token.info.strip().split(" ")[0] if kind == "fence" else "")
            elif kind == "hr":
                self._emit("———", self._quotes)
            elif kind == "tr_open":
                self._line_gap()
                self._cells = 0
            elif kind in ("th_open", "td_open"):
                if self._cells:
                    self._emit(" | ", self._quotes, cut=Cut.WORD)
                    self._raise_previous(Cut.WORD, skip=1)
                self._cells += 1

    def _list_item(self) -> None:
        self._bullet(self._quotes)  # an item that opens with a nested list keeps its own bullet
        self._line_gap()
        numbers = self._lists[-1] if self._lists else []
        indent = "  " * (len(self._lists) - 1)
        if numbers:
            self._pending_bullet = f"{indent}{numbers[0]}. "
            numbers[0] += 1
        else:
            self._pending_bullet = indent + ("• " if len(self._lists) % 2 else "◦ ")

    def _inline(self, children: Sequence[Token], *, bold: bool) -> None:
        self._bullet(self._quotes)
        marks: list[Mark] = [*self._quotes, *([Mark("bold")] if bold else [])]
        for index, child in enumerate(children):
            kind = child.type
            if kind in _STYLE:
                marks.append(Mark(_STYLE[kind]))
            elif kind in _STYLE_CLOSE:
                _remove_last(marks, _STYLE_CLOSE[kind])
            elif kind == "link_open":
                href = str(child.attrGet("href") or "")
                if safe_href(href):
                    shown = _link_text(children, index)
                    autolink = shown in (href, href.removeprefix("mailto:"))
                    marks.append(Mark("autolink" if autolink else "link", href))
                else:
                    marks.append(Mark("link", ""))  # an unsafe target: its text stays, the link goes
            elif kind == "link_close":
                _remove_last_of(marks, ("link", "autolink"))
            elif kind == "text":
                self._text(child.content, tuple(m for m in marks if m.kind != "link" or m.value))
            elif kind == "code_inline":
                self._text(child.content, (*(m for m in marks if m.kind != "link" or m.value), Mark("code")))
            elif kind == "image":  # its description, linked to the picture where no link holds it already
                src = str(child.attrGet("src") or "")
                linked = any(m.kind in ("link", "autolink") for m in marks) or not safe_href(src)
                self._text(child.content or "image", tuple(marks) if linked else (*marks, Mark("link", src)))
            elif kind in ("softbreak", "hardbreak"):
                self._space("\n", tuple(m for m in marks if m.kind == "quote"), Cut.LINE)

    def _code_block(self, content: str, language: str) -> None:
        mark = (*self._quotes, Mark("pre", re.sub(r"[^A-Za-z0-9_+-]", "", language)[:32]))
        # trailing blanks on a line are invisible in code; dropping them keeps blank-only parts from existing
        lines = [line.rstrip() for line in content.rstrip("\n").split("\n")]
        for number, line in enumerate(lines):
            if number:  # blank lines are code too: never merged like prose gaps
                self._emit("\n", mark, cut=Cut.LINE, space=True)
                self._raise_previous(Cut.LINE, skip=1)
            if not line:
                continue
            for piece in re.findall(r"[^\S\n]+|\S+", line):
                # indentation is code: kept at a part's start; only the line breaks may be dropped at a cut
                if piece.isspace():
                    self._emit(piece, mark)  # a cut goes before the blanks, so the next part keeps them
                    self._raise_previous(Cut.WORD, skip=1)
                else:
                    self._emit(piece, mark)

    def _text(self, text: str, marks: tuple[Mark, ...]) -> None:
        if not text:
            return
        for piece in _TOKENS.findall(text):
            if piece.startswith("\n\n"):
                self._space("\n\n", tuple(m for m in marks if m.kind == "quote"), Cut.PARAGRAPH)
            elif piece == "\n":
                self._space("\n", tuple(m for m in marks if m.kind == "quote"), Cut.LINE)
            elif piece.isspace():
                previous = self.atoms[-1].text if self.atoms else ""
                level = Cut.SENTENCE if _SENTENCE_END.search(previous) else Cut.WORD
                self._space(" ", marks, level)
            else:
                cjk_end = piece[-1] in "。！？"
                self._emit(piece, marks, cut=Cut.SENTENCE if cjk_end else Cut.NEVER)

    def _bullet(self, marks: tuple[Mark, ...]) -> None:
        if self._pending_bullet is not None:
            self._emit(self._pending_bullet, marks)
            self._pending_bullet = None

    def _block_gap(self) -> None:
        if self.atoms and not self._lists:
            self._space("\n\n", self._shared_quote(), Cut.PARAGRAPH)
        elif self.atoms:
            self._line_gap()

    def _line_gap(self) -> None:
        if self.atoms and not self.atoms[-1].text.endswith("\n"):
            self._space("\n", self._shared_quote(), Cut.LINE)

    def _shared_quote(self) -> tuple[Mark, ...]:
        # A gap inside a quote belongs to it; the gap where a quote starts or ends does not.
        last_quoted = bool(self.atoms) and any(m.kind == "quote" for m in self.atoms[-1].marks)
        return self._quotes if last_quoted else ()

    def _space(self, text: str, marks: tuple[Mark, ...], level: Cut) -> None:
        if self.atoms and self.atoms[-1].space and self.atoms[-1].marks == marks:
            last = self.atoms[-1]
            if last.cut >= level:
                return
            self.atoms[-1] = Atom(text, marks, level, True)
            self._raise_previous(level, skip=1)
            return
        self._emit(text, marks, cut=level, space=True)
        self._raise_previous(level, skip=1)

    def _raise_previous(self, level: Cut, skip: int = 0) -> None:
        index = len(self.atoms) - 1 - skip
        if index >= 0 and self.atoms[index].cut < level:
            atom = self.atoms[index]
            self.atoms[index] = Atom(atom.text, atom.marks, level, atom.space)

    def _emit(self, text: str, marks: tuple[Mark, ...], cut: Cut = Cut.NEVER, space: bool = False) -> None:
        self.atoms.append(Atom(text, marks, cut, space))


def _list_start(token: Token) -> int:
    start = token.attrGet("start")
    return int(start) if isinstance(start, int) or (isinstance(start, str) and start.isdigit()) else 1


def _link_text(children: Sequence[Token], start: int) -> str:
    return "".join(_until_link_close(children, start + 1))


def _until_link_close(children: Sequence[Token], start: int) -> Iterator[str]:
    for child in children[start:]:
        if child.type == "link_close":
            return
        yield child.content


def _remove_last(marks: list[Mark], kind: str) -> None:
    _remove_last_of(marks, (kind,))


def _remove_last_of(marks: list[Mark], kinds: tuple[str, ...]) -> None:
    for index in range(len(marks) - 1, -1, -1):
        if marks[index].kind in kinds:
            del marks[index]
            return
