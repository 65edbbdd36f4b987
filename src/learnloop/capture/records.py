"""Texts that record a moment rather than state a fact: a line someone said ("Gina: thanks, Jon!"), a question.

Two of them are two records however alike they read; dedupe treats only the same text repeated as a duplicate.
"""

from __future__ import annotations

import re

__all__ = ["is_record", "speaker"]

_SPEAKER = re.compile(r"^\s*((?:[A-Z][\w'.-]*)(?:\s[A-Z][\w'.-]*){0,2})\s?:\s")


# Labels a note opens with that name no speaker: "Correction: LH1123 departs at 08:05".
_NOTE_LABELS = frozenset(
    """
    correction update note reminder important fyi edit ps tip warning todo heads up new rule policy
    corrección corrección actualización nota korrektur hinweis aktualisierung correzione aggiornamento
    correção atualização lembrete rappel mise à jour
    """.split()
)


def speaker(text: str) -> str | None:
    """The name a text opens with as its speaker or subject ("Gina: thanks, Jon!"), if any."""
    match = _SPEAKER.match(text)
    if match is None or match.group(1).casefold() in _NOTE_LABELS:
        return None
    return match.group(1).casefold()


def is_record(text: str) -> bool:
    """A line someone said ("Gina: thanks, Jon!") or a question: a record of a moment, not a statement of a
    fact. Two of them are two records however alike; only the same text repeated is a duplicate."""
    return speaker(text) is not None or text.rstrip().endswith("?")
