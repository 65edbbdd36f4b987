"""Render atoms in a channel's markup and split them into parts that each fit the channel's message limit.

A part is rendered on its own: the marks open at its first atom are opened, the marks open at its last atom
are closed, so a formatted span that must be cut is closed at the cut and reopened in the next part. Sizes are
counted incrementally with the channel's own measure (`Markup.text_size` / `tag_size`), so the packer knows
exactly what a part will weigh before it renders it.

Where to cut: among the gaps that fit, the best kind (paragraph > line > sentence > word) wins, the latest
of that kind; gaps in the first third of a part are only used when nothing later fits, so a part is not cut
short at a paragraph break that sits just after its start. A word is cut only when no gap between words
fits: at a mark change inside it (`**bold**er`), else, for a single atom that fits nowhere, between code
points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..errors import ConfigurationError
from .document import Atom, Cut, Mark, read_markdown

__all__ = ["Markup", "format_markdown"]


class Markup(Protocol):
    """One channel's markup language."""

    def marks(self, atom: Atom) -> tuple[Mark, ...]:
        """The marks this channel can show on the atom, outermost first (its nesting rules applied)."""
        ...

    def open(self, mark: Mark) -> str: ...

    def close(self, mark: Mark) -> str: ...

    def text(self, text: str, marks: tuple[Mark, ...]) -> str:
        """The text as it appears inside these marks (escaped, quote prefixes added …)."""
        ...

    def text_size(self, text: str, marks: tuple[Mark, ...]) -> int:
        """What the platform counts for this text against its limit."""
        ...

    def tag_size(self, tag: str) -> int:
        """What the platform counts for an opening or closing tag."""
        ...


@dataclass(frozen=True)
class _Piece:
    text: str
    marks: tuple[Mark, ...]  # interned: equal mark sets are the same tuple, so `is` compares them
    cut: Cut
    space: bool
    size: int  # what the platform counts for the text


def format_markdown(markdown: str, markup: Markup, limit: int) -> list[str]:
    """Markdown → parts in `markup`, each within `limit` (0: one part, however long)."""
    atoms = read_markdown(markdown)
    shown = _inside_spans(atoms, [markup.marks(atom) for atom in atoms])
    interned: dict[tuple[Mark, ...], tuple[Mark, ...]] = {}
    pieces: list[_Piece] = []
    for atom, found in zip(atoms, shown, strict=True):
        marks = interned.setdefault(found, found)
        pieces.append(_Piece(atom.text, marks, atom.cut, atom.space, markup.text_size(atom.text, marks)))
    if not pieces:
        return []
    if limit <= 0:
        return [_render(pieces, markup)]
    return _Packer(pieces, markup, limit).parts()


def _inside_spans(atoms: Sequence[Atom], marks: list[tuple[Mark, ...]]) -> list[tuple[Mark, ...]]:
    """Blanks keep only the marks that run on from the word before them into the word after: a span never
    opens or closes on whitespace (WhatsApp reads `*bold *` as text). A code block keeps its blanks: they
    are its indentation."""
    words = [index for index, atom in enumerate(atoms) if not atom.text.isspace()]
    shown = list(marks)
    edges = list(zip([-1, *words], [*words, len(atoms)], strict=True))
    for before, after in edges:
        left = marks[before] if before >= 0 else ()
        right = marks[after] if after < len(atoms) else ()
        for index in range(max(before + 1, 0), after):
            own = marks[index]
            if any(m.kind == "pre" for m in own):
                continue
            kept: list[Mark] = []
            for mark, other in zip(left, right, strict=False):
                if mark != other or mark not in own:
                    break
                kept.append(mark)
            shown[index] = tuple(kept)
    return shown


def _render(pieces: Sequence[_Piece], markup: Markup) -> str:
    out: list[str] = []
    stack: tuple[Mark, ...] = ()
    for piece in pieces:
        if piece.marks is not stack:
            common = _common(stack, piece.marks)
            out.extend(markup.close(m) for m in reversed(stack[common:]))
            out.extend(markup.open(m) for m in piece.marks[common:])
            stack = piece.marks
        out.append(markup.text(piece.text, piece.marks))
    out.extend(markup.close(m) for m in reversed(stack))
    return "".join(out)


class _Packer:
    def __init__(self, pieces: list[_Piece], markup: Markup, limit: int) -> None:
        self.pieces = pieces
        self.markup = markup
        self.limit = limit
        self._gaps = self._gap_levels()
        self._transitions: dict[tuple[int, int], int] = {}
        self._edges: dict[int, tuple[int, int]] = {}  # id(marks) -> (cost to open all, cost to close all)

    def parts(self) -> list[str]:
        parts: list[str] = []
        start = self._skip_space(0)
        while start < len(self.pieces):
            end = self._fit(start)
            if end is None:
                self._make_room(start)
                start = self._skip_space(start)
                continue
            parts.append(_render(self.pieces[start : end + 1], self.markup))
            start = self._skip_space(end + 1)
        return parts

    def _fit(self, start: int) -> int | None:
        """The last piece of the part that starts at `start`, or None when not even that piece fits."""
        pieces, limit, gaps = self.pieces, self.limit, self._gaps
        running = self._edge(pieces[start].marks)[0] + pieces[start].size
        best: tuple[int, int] | None = None  # (gap level, index) of the best cut between words
        best_filled: tuple[int, int] | None = None  # the same among cuts that fill a third of the part
        inside_word: int | None = None  # the last cut inside a word (`**bold**er`): only if nothing else fits
        index = start
        while True:
            piece = pieces[index]
            if not piece.space and not piece.text.isspace():  # a part never ends in blanks
                size = running + self._edge(piece.marks)[1]
                if size <= limit:
                    candidate = (gaps[index], index)
                    if candidate[0] == Cut.NEVER:
                        inside_word = index
                    else:
                        best = candidate if best is None or candidate >= best else best
                        if size * 3 >= limit and (best_filled is None or candidate >= best_filled):
                            best_filled = candidate
            index += 1
            if index == len(pieces):
                break
            following = pieces[index]
            if following.marks is not piece.marks:
                running += self._transition(piece.marks, following.marks)
            running += following.size
            if running > limit:
                break
        chosen = best_filled or best
        return inside_word if chosen is None else chosen[1]

    def _gap_levels(self) -> list[int]:
        """For each piece, the best kind of cut in the gap after it (through any whitespace that follows)."""
        levels = [0] * len(self.pieces)
        run = int(Cut.PARAGRAPH) + 1  # the whitespace after the last word runs to the end, which beats any gap
        for index in range(len(self.pieces) - 1, -1, -1):
            piece = self.pieces[index]
            if piece.space:
                run = levels[index] = max(run, int(piece.cut))
            else:
                levels[index] = max(run, int(piece.cut))
                run = 0  # no whitespace yet before the next word back
        return levels

    def _make_room(self, start: int) -> None:
        """Nothing from `start` fits: split the first word into characters, or let a lone character go plain,
        or, when blanks (a code block's indentation) alone overflow, let them go."""
        index = start
        while index < len(self.pieces) and self.pieces[index].text.isspace():
            index += 1
        if index == len(self.pieces):
            self._drop(start, index)
            return
        piece = self.pieces[index]
        if len(piece.text) > 1:
            size = self.markup.text_size
            chars = [_Piece(c, piece.marks, Cut.NEVER, False, size(c, piece.marks)) for c in piece.text]
            last = chars[-1]
            chars[-1] = _Piece(last.text, last.marks, piece.cut, False, last.size)
            self.pieces[index : index + 1] = chars
            # between the characters of a word there is no gap worth anything; after the last, the word's own
            self._gaps[index : index + 1] = [int(Cut.NEVER)] * (len(chars) - 1) + [self._gaps[index]]
        elif piece.marks:
            # a limit so small that one character and its tags do not fit: the character goes plain
            self.pieces[index] = _Piece(piece.text, (), piece.cut, piece.space, self.markup.text_size(piece.text, ()))
        elif index > start:
            self._drop(start, index)
        else:
            raise ConfigurationError(f"message limit {self.limit} cannot hold a single character")

    def _drop(self, start: int, end: int) -> None:
        for index in range(start, end):
            piece = self.pieces[index]
            self.pieces[index] = _Piece(piece.text, piece.marks, piece.cut, True, piece.size)

    def _skip_space(self, index: int) -> int:
        while index < len(self.pieces) and self.pieces[index].space:
            index += 1
        return index

    def _edge(self, marks: tuple[Mark, ...]) -> tuple[int, int]:
        found = self._edges.get(id(marks))
        if found is None:
            found = self._edges[id(marks)] = (self._opens(marks), self._closes(marks))
        return found

    def _transition(self, before: tuple[Mark, ...], after: tuple[Mark, ...]) -> int:
        key = (id(before), id(after))
        found = self._transitions.get(key)
        if found is None:
            common = _common(before, after)
            found = self._transitions[key] = self._closes(before[common:]) + self._opens(after[common:])
        return found

    def _opens(self, marks: Sequence[Mark]) -> int:
        return sum(self.markup.tag_size(self.markup.open(m)) for m in marks)

    def _closes(self, marks: Sequence[Mark]) -> int:
        return sum(self.markup.tag_size(self.markup.close(m)) for m in marks)


def _common(a: tuple[Mark, ...], b: tuple[Mark, ...]) -> int:
    count = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        count += 1
    return count
