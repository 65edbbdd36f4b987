"""Query terms for keyword search: words minus stopwords, shared by every backend's full-text query."""

from __future__ import annotations

import re
from collections import Counter

import snowballstemmer

__all__ = ["MAX_QUERY_CHARS", "STOPWORDS", "index_terms", "mentions_any", "query_names", "query_terms", "stem"]

# Longer queries are cut: the embedder reads 256 tokens at most and a prompt-sized query helps no ranking.
MAX_QUERY_CHARS = 4000

_WORD = re.compile(r"[^\W_]+(?:[.'][^\W_]+)*", re.UNICODE)

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before being below
    between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during
    each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's
    hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's
    me more most mustn't my myself no nor not of off on once only or other ought our ours ourselves out over
    own same shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs
    them themselves then there there's these they they'd they'll they're they've this those through to too
    under until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where
    where's which while who who's whom why why's will with won't would wouldn't you you'd you'll you're
    you've your yours yourself yourselves also just much many get got really ever
    """.split()
)


def query_terms(text: str, *, limit: int = 24) -> list[str]:
    """Distinct lower-case content words in order of first appearance, at most `limit` of them."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text.casefold()):
        word = match.group(0)
        if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        seen.setdefault(word, None)
        if len(seen) >= limit:
            break
    return list(seen)


_STEMMER = snowballstemmer.stemmer("english")
_STEMS: dict[str, str] = {}
_STEM_CACHE_LIMIT = 200_000


def stem(word: str) -> str:
    """English (Porter2) stem of a lower-case word, memoised: documents repeat their vocabulary."""
    found = _STEMS.get(word)
    if found is None:
        found = word if word.isdigit() else _STEMMER.stemWord(word)
        if len(_STEMS) < _STEM_CACHE_LIMIT:
            _STEMS[word] = found
    return found


def index_terms(text: str) -> Counter[str]:
    """Stemmed content words of a document with their counts, for keyword ranking."""
    # Loading a partition runs this for every row: the stem cache is read inline rather than through `stem`.
    cached = _STEMS.get
    stems = [
        cached(word) or stem(word)
        for word in _WORD.findall(text.casefold())
        if word not in STOPWORDS and (len(word) > 1 or word.isdigit())
    ]
    return Counter(stems)


_SENTENCES = re.compile(r"[.!?¿¡。！？]\s*")
_WORDS = re.compile(r"[^\W\d_][\w'’-]*")
_POSSESSIVE = re.compile(r"['’]s$")
_FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll", "i’m", "i’ve", "i’d", "i’ll"})


def query_names(text: str) -> frozenset[str]:
    """The names a question asks about: capitalised words that do not open a sentence ("Caroline", "Peru",
    "EUR"), casefolded, possessive dropped. Scripts without case give none. In German every noun is
    capitalised and counts: a noun memory never mentions is as strong a sign as a name."""
    names: set[str] = set()
    for sentence in _SENTENCES.split(text):
        for position, word in enumerate(_WORDS.findall(sentence)):
            if position == 0 or len(word) < 2 or word.casefold() in _FIRST_PERSON or not word[0].isupper():
                continue
            names.add(_POSSESSIVE.sub("", word).casefold())
    return frozenset(names)


def mentions_any(text: str, names: frozenset[str]) -> bool:
    """Does `text` name one of `names` (as a word or the start of one: "Caroline's", "Perus")?"""
    folded = text.casefold()
    return any(re.search(r"(?<!\w)" + re.escape(name), folded) for name in names)
