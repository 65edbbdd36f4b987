"""A learning's keyword terms as stored beside it (`learnings.index_terms`), so loading a partition reads them
instead of tokenising every text again.

Tokenising and stemming a text costs about 60 µs in Python: a cold user's first search spent most of its time
on it (6.3 of 10.8 ms at 100 learnings a user). The stored form is the stemmed terms separated by spaces, each
repeated as often as it occurs, in the order `index_terms` returns them, so parsing it gives the same counts in
the same order (the keyword index assigns term ids in that order; scores stay bit for bit the same). A term
never holds whitespace (`terms._WORD` matches none). NULL means not stored: the row was written before the
column existed, or by a writer that changed its text without setting them (a trigger clears them then); a load
tokenises such a row, and the idle backfill (`stores.sql.terms_backfill`) stores them.

Changing what `terms.index_terms` returns (stopwords, stemmer, pattern) needs a migration that sets every
`index_terms` to NULL, or the stored terms would no longer match what queries are tokenised into.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ...terms import index_terms

__all__ = ["document_terms", "parse_terms", "stored_terms"]


def document_terms(text: str, topic: str, tags: Iterable[str]) -> Counter[str]:
    """The keyword terms of a learning: its text, topic and tags, as the partition's index holds them."""
    return index_terms(f"{text}\n{topic}\n{' '.join(tags)}")


def stored_terms(text: str, topic: str, tags: Iterable[str]) -> str:
    """`document_terms` in the stored form."""
    return " ".join(document_terms(text, topic, tags).elements())


def parse_terms(stored: str) -> Counter[str]:
    """The counts `stored_terms` wrote, in the same order."""
    return Counter(stored.split())
