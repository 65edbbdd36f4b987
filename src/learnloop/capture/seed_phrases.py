"""Wallet recovery phrases: 12 or more words in a row from the BIP-39 word list (Trezor's `mnemonic` package).

A recovery phrase is the wallet: whoever reads it owns the funds. It is plain words, so only the standard word
list finds it, in any language around it ("복구 문구: able anchor acoustic …"). Prose never has twelve BIP-39
words in a row: its short words ("the", "and", "of", "is") are not in the list.
"""

from __future__ import annotations

import functools
import re

from mnemonic import Mnemonic

from .gate_rule import GateRule

__all__ = ["SEED_PHRASE_RULES"]

_MIN_WORDS = 12
_TOKEN = re.compile(r"\S+")
_NUMBERING = re.compile(r"\d{1,2}[.):]?")


@functools.cache
def _wordlist() -> frozenset[str]:
    return frozenset(Mnemonic("english").wordlist)


def _seed_phrase(text: str) -> tuple[int, int] | None:
    """The span of the first run of 12+ list words (numbering and punctuation between them allowed)."""
    words = _wordlist()
    lowered = text.lower()
    if len(words.intersection(lowered.split())) < _MIN_WORDS // 2:
        return None  # cheap: not even six distinct list words in the whole text
    start = end = -1
    run = 0
    for m in _TOKEN.finditer(lowered):
        token = m.group(0).strip(",;.:()[]\"'")
        if not token or _NUMBERING.fullmatch(token):
            continue  # "1. abandon 2. ability …"
        if token.lstrip("0123456789.):") in words:
            start = m.start() if run == 0 else start
            end = m.end()
            run += 1
        elif run >= _MIN_WORDS:
            break
        else:
            run = 0
    return (start, end) if run >= _MIN_WORDS else None


SEED_PHRASE_RULES: tuple[GateRule, ...] = (
    GateRule(
        "secret.seed_phrase",
        "secret",
        "looks like a wallet recovery phrase (12+ BIP-39 words)",
        "",
        finder=_seed_phrase,
        detector="mnemonic:bip39-english",
    ),
)
