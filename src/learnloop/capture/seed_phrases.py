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
from .needles import Folded, literal_needles

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


# Named as a recovery phrase, twelve or more plain words are one whatever list they come from (wallets in other
# languages, or a phrase of the user's own).
_PHRASE_LABEL = Folded(
    re.compile(
        r"(?:recovery|seed|secret|backup|mnemonic|wallet) (?:phrase|words|seed)|seed ?phrase|mnemonic"
        r"|kurtarma (?:kelimeleri|ifadesi)|phrase (?:de récupération|secrète|mnémonique)"
        r"|frase (?:de recuperación|semilla|de recuperação|di recupero|mnemonica|secreta|de respaldo)"
        r"|wiederherstellungs(?:phrase|wörter)|seed-phrase|herstelzin|herstelwoorden|fraza (?:odzyskiwania|seed)"
        r"|återställningsfras|мнемоническ\w* фраз\w*|сид-фраз\w*|секретн\w* фраз\w*|фраз\w* восстановлени\w*"
        r"|助记词|助記詞|リカバリーフレーズ|復元フレーズ|シードフレーズ|시드 문구|복구 문구"
        r"|palavras (?:de recuperação|secretas|semente)|palabras (?:de recuperación|semilla)|mots de récupération"
        r"|parole di recupero|słowa (?:odzyskiwania|seed)|слова (?:восстановления|для восстановления)"
        r"|слова відновлення|kata pemulihan|từ khôi phục|kurtarma sözcükleri|obnovovací (?:fráze|slova)",
        re.IGNORECASE,
    )
)
_WORD_RUN = re.compile(r"(?:[^\W\d_]{2,}[,;]?\s+){11,}[^\W\d_]{2,}")


# Prose about a phrase ("the seed phrase is stored offline in the safe …") has function words; a phrase has none.
_FUNCTION_WORDS = frozenset(
    """
    the is are was were be in of to and or it on at for with from by not we you my our your this that its into
    der die das und ist sind mit von zu im den dem nicht le la les et est un une des du dans pour sur pas
    el los las es en con por una del que il di che per non sono os um uma com não para het een van op niet
    ve bir bu ile için değil и в на не с что это как i w z na się jest nie och är att för med på inte
    """.split()
)


def _labelled_phrase(text: str) -> tuple[int, int] | None:
    for label in _PHRASE_LABEL.finditer(text):
        run = _WORD_RUN.search(text, label.end(), min(len(text), label.end() + 400))
        if run is None or run.start() - label.end() > 24:
            continue
        words = {w.strip(",;").casefold() for w in run.group(0).split()}
        if not words & _FUNCTION_WORDS:
            return run.span()
    return None


SEED_PHRASE_RULES: tuple[GateRule, ...] = (
    GateRule(
        "secret.seed_phrase.labelled",
        "secret",
        "gives a wallet recovery phrase (twelve or more words named as one)",
        "",
        finder=_labelled_phrase,
        needles=literal_needles(_PHRASE_LABEL.pattern),
    ),
    GateRule(
        "secret.seed_phrase",
        "secret",
        "looks like a wallet recovery phrase (12+ BIP-39 words)",
        "",
        finder=_seed_phrase,
        detector="mnemonic:bip39-english",
    ),
)
