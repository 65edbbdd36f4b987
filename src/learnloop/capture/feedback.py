"""Feedback on the previous answer, read from the user's next message (seed 001 §4.4 / §6.5, generalised).

`FeedbackAnalyzer.analyze(previous, current_message, gap_seconds=…)` returns one `Feedback` with a type and
a quality score from -1 to 1:

================================  =====  ===========================================================
type                              score  signal
================================  =====  ===========================================================
explicit_positive                 +0.8   "thanks", "perfect", "that worked" (+0.4 for mild: "not bad", "ok")
follow_up_refinement              +0.5   "break it down by …", "what about …" on the same topic
follow_up_same_topic              +0.3   the next message continues the topic (shared content words)
no_reply                          +0.1   no follow-up for 30 minutes (or an empty message)
follow_up_new_topic                0.0   an unrelated next message; also the first message of a session
follow_up_correction              -0.5   "no, …", "that's wrong", "I meant …", "actually it's 3.5"
repeated_question                 -0.7   the same question again (0.0 and `duplicate` within 30 s)
explicit_negative                 -0.8   "doesn't work", "useless" (-0.4 for mild: "not great", "not helpful")
================================  =====  ===========================================================

Same topic scores +0.3, as §4.4's table says, not the 0.2 of §6.5's sketch: the table is the specification
(the sketch is illustrative code), and +0.3 keeps the scale evenly ordered between refinement (+0.5) and no
reply (+0.1).

Explicit `meta` signals from the app (seed 004: ``validation_passed``, ``feedback``) override the keywords:
a test that passed says more than a "hmm". Within a message, precedence fixes the seed sketch's traps:
idioms are removed first ("no problem, thanks!" is thanks), the clause after a contrast decides ("great, but
the boil-off is actually 3.5" is a correction), frustration beats correction beats praise, a weak correction
word gives way to praise in its own clause ("actually that worked great"), and praise inside a question
("is that correct?") is not praise. Keyword lists are data (`FeedbackKeywords`); apps extend them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..terms import query_terms, stem
from .feedback_model import FeedbackModel, decide, load_feedback_model, torn

__all__ = [
    "CUE_NAMES",
    "DISCREDITING",
    "LABEL_TYPES",
    "SCORES",
    "Feedback",
    "FeedbackAnalyzer",
    "FeedbackKeywords",
    "FeedbackType",
    "PreviousTurn",
]


class FeedbackType(StrEnum):
    EXPLICIT_POSITIVE = "explicit_positive"
    FOLLOW_UP_CORRECTION = "follow_up_correction"
    EXPLICIT_NEGATIVE = "explicit_negative"
    FOLLOW_UP_REFINEMENT = "follow_up_refinement"
    FOLLOW_UP_SAME_TOPIC = "follow_up_same_topic"
    FOLLOW_UP_NEW_TOPIC = "follow_up_new_topic"
    REPEATED_QUESTION = "repeated_question"
    NO_REPLY = "no_reply"
    FAILURE = "failure"
    OUTDATED = "outdated"
    NEW_STATEMENT = "new_statement"
    EXCLAMATION = "exclamation"
    # The learned model leans negative, below the confidence that acting on it needs (score 0), or is sure it is
    # negative but torn between two negative labels (score -0.4: what the answer used is demoted, not deprecated).
    UNCLEAR = "unclear"


SCORES: dict[FeedbackType, float] = {
    FeedbackType.EXPLICIT_POSITIVE: 0.8,
    FeedbackType.FOLLOW_UP_REFINEMENT: 0.5,
    FeedbackType.FOLLOW_UP_SAME_TOPIC: 0.3,
    FeedbackType.NO_REPLY: 0.1,
    FeedbackType.FOLLOW_UP_NEW_TOPIC: 0.0,
    FeedbackType.FOLLOW_UP_CORRECTION: -0.5,
    FeedbackType.REPEATED_QUESTION: -0.7,
    FeedbackType.EXPLICIT_NEGATIVE: -0.8,
    FeedbackType.FAILURE: -0.8,
    FeedbackType.OUTDATED: -0.3,
    FeedbackType.NEW_STATEMENT: 0.0,
    FeedbackType.EXCLAMATION: 0.0,
    FeedbackType.UNCLEAR: 0.0,
}
#: The learned model's nine labels as feedback types (`frustration` is the seed's explicit negative).
LABEL_TYPES: dict[str, FeedbackType] = {
    "positive": FeedbackType.EXPLICIT_POSITIVE,
    "refinement": FeedbackType.FOLLOW_UP_REFINEMENT,
    "new_topic": FeedbackType.FOLLOW_UP_NEW_TOPIC,
    "new_statement": FeedbackType.NEW_STATEMENT,
    "exclamation": FeedbackType.EXCLAMATION,
    "correction": FeedbackType.FOLLOW_UP_CORRECTION,
    "failure": FeedbackType.FAILURE,
    "frustration": FeedbackType.EXPLICIT_NEGATIVE,
    "outdated": FeedbackType.OUTDATED,
    "unclear": FeedbackType.UNCLEAR,
}
#: What the answer used failed: seed 004 deprecates it so that it is not surfaced again.
DISCREDITING = frozenset({FeedbackType.FAILURE, FeedbackType.FOLLOW_UP_CORRECTION})
_RULE_TYPES = tuple(FeedbackType)[:8]
_KEYWORD_CUES = (
    "frustration",
    "failure",
    "correction",
    "weak_correction",
    "gratitude",
    "mild_positive",
    "refinement",
    "neutral",
)
#: The cues the learned model reads next to the text (`FeedbackAnalyzer.cues`), in order.
CUE_NAMES: tuple[str, ...] = (
    *(f"rule:{t.value}" for t in _RULE_TYPES),
    *(f"kw:{name}" for name in _KEYWORD_CUES),
    "kw:praise",
    "kw:praise_negated",
    "kw:contrast",
    "starts_no",
    "question",
    "exclaims",
    "digit",
    "words",
    "overlap",
    "shared",
)
MILD_POSITIVE_SCORE = 0.4
MILD_NEGATIVE_SCORE = -0.4
Source = Literal["meta", "keywords", "model", "repeat", "topic", "timing", "none"]


@dataclass(frozen=True)
class Feedback:
    """The verdict on the previous answer. `matched` is the keyword or meta key that decided it."""

    type: FeedbackType
    score: float
    signal_text: str = ""
    source: Source = "none"
    matched: str | None = None
    duplicate: bool = False  # the same message again within the duplicate window: not a rating at all
    probability: float | None = None  # the learned model's, when it decided

    @property
    def positive(self) -> bool:
        return self.score > 0

    @property
    def negative(self) -> bool:
        return self.score < 0


@dataclass(frozen=True)
class PreviousTurn:
    """The previous user message (its text, or just its content words) and when it was sent."""

    text: str = ""
    terms: tuple[str, ...] = ()
    at: datetime | None = None

    def stems(self, generic: frozenset[str]) -> frozenset[str]:
        words = self.terms or tuple(query_terms(self.text, limit=64))
        return frozenset(stem(w) for w in words if w not in generic)


@dataclass(frozen=True)
class FeedbackKeywords:
    """Phrase lists, lower case, matched on word boundaries. `extended(positive=(…,))` adds to a list."""

    frustration: tuple[str, ...] = (
        "useless", "terrible", "waste of time", "not what i asked", "not what i wanted", "not what i meant",
        "makes no sense", "you're not listening", "still wrong", "wrong again", "ugh", "wtf", "frustrating",
        "annoying", "garbage", "awful", "horrible", "nonsense", "nice try", "worse",
    )  # fmt: skip
    #: It was tried and did not work (seed 004: what the answer used is deprecated).
    failure: tuple[str, ...] = (
        "doesn't work", "does not work", "didn't work", "did not work", "not working", "still broken", "is broken",
        "didn't help", "did not help", "didn't fix", "did not fix", "still fails", "still failing", "same error",
        "still getting", "still won't", "still doesn't", "still does not", "no change", "made it worse",
    )  # fmt: skip
    correction: tuple[str, ...] = (
        "that's wrong", "that is wrong", "wrong", "incorrect", "not quite", "not exactly", "not really", "not that",
        "i meant", "i said", "try again", "redo", "that's not right", "not right", "not correct", "not true",
        "you misunderstood", "that's not it",
    )  # fmt: skip
    weak_correction: tuple[str, ...] = ("actually", "instead", "rather than", "different", "in fact")
    gratitude: tuple[str, ...] = ("thanks", "thank you", "thx", "ty", "cheers", "appreciate it", "much appreciated")
    praise: tuple[str, ...] = (
        "great", "perfect", "awesome", "helpful", "exactly", "nice", "good", "excellent", "wonderful", "brilliant",
        "that worked", "it worked", "worked great", "works now", "works perfectly", "worked perfectly",
        "that's right", "that's correct", "spot on", "love it", "amazing", "fantastic", "nailed it", "works great",
        "that did it", "did the trick", "fixed it",
    )  # fmt: skip
    mild_positive: tuple[str, ...] = (
        "not bad",
        "ok",
        "okay",
        "fine",
        "good enough",
        "fair enough",
        "makes sense",
        "got it",
        "cool",
        "sure",
    )
    refinement: tuple[str, ...] = (
        "more detail", "more details", "tell me more", "can you also", "could you also", "what about", "how about",
        "break it down", "break down", "broken down", "drill down", "dig deeper", "go deeper", "expand on",
        "elaborate", "specifically", "in particular", "zoom in", "split by", "group by", "and also", "same for",
        "now show", "now do", "compare",
    )  # fmt: skip
    #: Removed before anything else: they contain "no", "good" or "bad" but are not verdicts.
    neutral: tuple[str, ...] = (
        "no problem", "no worries", "no thanks", "no need", "no rush", "no doubt", "not a problem", "good morning",
        "good night", "good evening", "good afternoon", "good luck", "no matter", "no big deal", "all good",
    )  # fmt: skip
    negators: tuple[str, ...] = ("not", "never", "no", "hardly", "isn't", "wasn't", "didn't", "doesn't", "aren't")
    contrast: tuple[str, ...] = ("but", "however", "although", "though", "except", "yet")
    #: Words too common to say two messages share a topic.
    generic: tuple[str, ...] = (
        "show", "please", "give", "tell", "need", "want", "like", "make", "one", "thing", "things", "can", "now",
        "last", "next", "new", "get", "know", "see", "look", "help", "thanks", "ok", "okay", "yes", "yeah",
    )  # fmt: skip

    def extended(self, **more: tuple[str, ...]) -> FeedbackKeywords:
        return replace(self, **{name: (*getattr(self, name), *words) for name, words in more.items()})


def _phrases(words: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![\w']){'(?:' + alternatives + ')'}(?![\w'])", re.IGNORECASE)


_TRUE = frozenset({"true", "yes", "1", "pass", "passed", "ok", "success"})
_FALSE = frozenset({"false", "no", "0", "fail", "failed", "error"})
_POSITIVE_META = frozenset({"positive", "up", "thumbs_up", "good", "+1", "like", "helpful"})
_NEGATIVE_META = frozenset({"negative", "down", "thumbs_down", "bad", "-1", "dislike", "unhelpful"})
_NO = re.compile(r"^(?:no|nope|nah)(?:[\s,.!:;-]+(?=\w)|[,.!]|$)", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_NOT_A_VERDICT = frozenset({FeedbackType.FOLLOW_UP_NEW_TOPIC, FeedbackType.NEW_STATEMENT, FeedbackType.EXCLAMATION})
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'"})


@dataclass
class FeedbackAnalyzer:
    """Implicit and explicit feedback detection. Thresholds in seconds; keyword lists in `keywords`."""

    keywords: FeedbackKeywords = field(default_factory=FeedbackKeywords)
    no_reply_after: float = 1800.0
    duplicate_window: float = 30.0
    repeat_similarity: float = 0.8
    same_topic_overlap: float = 0.34
    elliptical_terms: int = 4
    #: The learned reader of the nine labels (`feedback_model`); None keeps the keyword rules alone.
    model: FeedbackModel | None = field(default_factory=load_feedback_model, repr=False)

    def __post_init__(self) -> None:
        k = self.keywords
        self._re = {name: _phrases(getattr(k, name)) for name in k.__dataclass_fields__ if name != "generic"}
        self._contrast = re.compile(rf"[,;]?\s*\b(?:{'|'.join(map(re.escape, k.contrast))})\b", re.IGNORECASE)
        self._generic = frozenset(k.generic)

    def analyze(
        self,
        previous: PreviousTurn | None,
        current_message: str,
        *,
        gap_seconds: float | None = None,
        meta: Mapping[str, Any] | None = None,
        vector: Sequence[float] | Any | None = None,
    ) -> Feedback:
        """`vector`: the message's embedding by the bundled MiniLM, if the caller has it (the model reads it)."""
        message = (current_message or "").translate(_APOSTROPHES).strip()
        signal = _clip(message)
        from_meta = self._from_meta(meta or {})
        if from_meta is not None:
            return from_meta
        if gap_seconds is None and previous is not None and previous.at is not None:
            at = previous.at if previous.at.tzinfo else previous.at.replace(tzinfo=UTC)
            gap_seconds = (datetime.now(UTC) - at).total_seconds()
        if not message:
            return Feedback(FeedbackType.NO_REPLY, SCORES[FeedbackType.NO_REPLY], "", "timing")
        if previous is None:  # the first message of a session rates nothing
            return Feedback(FeedbackType.FOLLOW_UP_NEW_TOPIC, 0.0, signal, "none")
        if self.model is not None:
            words = self._word_sets(previous, message)
            repeated = self._repeated(previous, message, signal, gap_seconds, words)
            return repeated or self._from_model(self.model, previous, message, signal, gap_seconds, vector, words)
        verdict = self._from_keywords(message)
        if verdict is not None:
            kind, score, matched = verdict
            return Feedback(kind, score, signal, "keywords", matched)
        if gap_seconds is not None and gap_seconds >= self.no_reply_after:
            # Whatever comes after a long silence is a new visit, not a reaction to the last answer.
            return Feedback(FeedbackType.NO_REPLY, SCORES[FeedbackType.NO_REPLY], signal, "timing")
        return self._from_topic(previous, message, signal, gap_seconds)

    def cues(
        self, previous: PreviousTurn | None, message: str, words: tuple[frozenset[str], frozenset[str]] | None = None
    ) -> npt.NDArray[np.float64]:
        """What the keyword rules and the context say about a follow-up, as the model's cue inputs
        (`CUE_NAMES` order). `words`: the two messages' content stems, when the caller has them."""
        text = (message or "").translate(_APOSTROPHES).strip()
        previous = previous or PreviousTurn()
        words = words or self._word_sets(previous, text)
        before, now = words
        verdict = self._from_keywords(text)
        rule = verdict[0] if verdict else self._from_topic(previous, text, "", None, words).type
        found = {name: self._re[name].search(text) is not None for name in _KEYWORD_CUES}
        praise = self._praise(text)
        values = [
            *(float(rule is t) for t in _RULE_TYPES),
            *(float(found[name]) for name in _KEYWORD_CUES),
            float(praise is not None and praise != "negated"),
            float(praise == "negated"),
            float(self._contrast.search(text) is not None),
            float(_NO.match(text) is not None),
            float(text.rstrip().endswith("?")),
            float("!" in text),
            float(_DIGIT.search(text) is not None),
            min(1.0, len(text.split()) / 30),
            len(before & now) / max(1, len(before | now)),
            float(bool(before & now)),
        ]
        return np.asarray(values, dtype=np.float64)

    def _from_model(
        self,
        model: FeedbackModel,
        previous: PreviousTurn,
        message: str,
        signal: str,
        gap: float | None,
        vector: Sequence[float] | Any | None,
        words: tuple[frozenset[str], frozenset[str]],
    ) -> Feedback:
        p = model.probabilities(message, self.cues(previous, message, words), vector)
        label, probability = decide(p, model.thresholds)
        kind = LABEL_TYPES[label]
        score = SCORES[kind]
        if kind is FeedbackType.UNCLEAR and torn(p):
            score = MILD_NEGATIVE_SCORE  # surely bad, not which way: demoted, never deprecated
        elif kind is FeedbackType.EXPLICIT_POSITIVE and not self._strong_praise(message):
            score = MILD_POSITIVE_SCORE  # "ok", "fine", "got it": approval, not a verdict that it worked
        elif kind in _NOT_A_VERDICT and gap is not None and gap >= self.no_reply_after:
            kind, score = FeedbackType.NO_REPLY, SCORES[FeedbackType.NO_REPLY]
        elif kind is FeedbackType.FOLLOW_UP_NEW_TOPIC and self._same_topic(words):
            kind, score = FeedbackType.FOLLOW_UP_SAME_TOPIC, SCORES[FeedbackType.FOLLOW_UP_SAME_TOPIC]
        return Feedback(kind, score, signal, "model", label, probability=round(probability, 4))

    def _strong_praise(self, message: str) -> bool:
        text = self._re["neutral"].sub(" ", message)
        if self._re["gratitude"].search(text):
            return True
        praise = self._praise(text)
        return (praise is not None and praise != "negated") or not self._re["mild_positive"].search(text)

    # ---- signals ---------------------------------------------------------------------------------------------

    def _from_meta(self, meta: Mapping[str, Any]) -> Feedback | None:
        for key in ("validation_passed", "feedback", "feedback_score"):
            if key not in meta or meta[key] is None:
                continue
            value = meta[key]
            if key == "feedback_score" and isinstance(value, int | float) and not isinstance(value, bool):
                score = max(-1.0, min(1.0, float(value)))
                kind = FeedbackType.EXPLICIT_POSITIVE if score >= 0 else FeedbackType.EXPLICIT_NEGATIVE
                return Feedback(kind, score, f"meta {key}={value}", "meta", key)
            text = str(value).strip().casefold()
            good = value is True or (key == "validation_passed" and text in _TRUE) or text in _POSITIVE_META
            bad = value is False or (key == "validation_passed" and text in _FALSE) or text in _NEGATIVE_META
            if good != bad:
                kind = FeedbackType.EXPLICIT_POSITIVE if good else FeedbackType.EXPLICIT_NEGATIVE
                return Feedback(kind, SCORES[kind], f"meta {key}={value}"[:100], "meta", key)
        return None

    def _from_keywords(self, message: str) -> tuple[FeedbackType, float, str] | None:
        text = self._re["neutral"].sub(" ", message)
        clauses = [c.strip() for c in self._contrast.split(text) if c.strip()]
        # The clause after "but" is what the user means; earlier clauses decide only when it carries no signal.
        for index, clause in enumerate(reversed(clauses)):
            verdict = self._clause(clause, first=index == len(clauses) - 1)
            if verdict is not None:
                return verdict
        return None

    def _clause(self, clause: str, *, first: bool) -> tuple[FeedbackType, float, str] | None:
        question = clause.rstrip().endswith("?")
        if found := self._re["frustration"].search(clause):
            return FeedbackType.EXPLICIT_NEGATIVE, SCORES[FeedbackType.EXPLICIT_NEGATIVE], found.group(0)
        if found := self._re["failure"].search(clause):
            return FeedbackType.FAILURE, SCORES[FeedbackType.FAILURE], found.group(0)
        if (found := self._re["correction"].search(clause)) or (first and (found := _NO.match(clause))):
            return FeedbackType.FOLLOW_UP_CORRECTION, SCORES[FeedbackType.FOLLOW_UP_CORRECTION], found.group(0)
        praise = None if question else self._praise(clause)
        if praise == "negated":
            return FeedbackType.EXPLICIT_NEGATIVE, MILD_NEGATIVE_SCORE, "negated praise"
        # "actually it's 3.5" corrects; "actually that worked great" praises.
        weak = self._re["weak_correction"].search(clause)
        if weak and (_DIGIT.search(clause[weak.end() :]) or praise is None):
            return FeedbackType.FOLLOW_UP_CORRECTION, SCORES[FeedbackType.FOLLOW_UP_CORRECTION], weak.group(0)
        if found := self._re["gratitude"].search(clause):
            return FeedbackType.EXPLICIT_POSITIVE, SCORES[FeedbackType.EXPLICIT_POSITIVE], found.group(0)
        if praise is not None:
            return FeedbackType.EXPLICIT_POSITIVE, SCORES[FeedbackType.EXPLICIT_POSITIVE], praise
        return None  # refinement and mild approval are weaker than repetition; `_from_topic` weighs them

    def _praise(self, clause: str) -> str | None:
        """The first praise word, or "negated" when every praise word is negated ("not great")."""
        negated = False
        for found in self._re["praise"].finditer(clause):
            before = clause[: found.start()].casefold().split()[-2:]
            if any(w.strip(",.") in self.keywords.negators or w.endswith("n't") for w in before):
                negated = True
                continue
            return found.group(0)
        return "negated" if negated else None

    def _word_sets(self, previous: PreviousTurn, message: str) -> tuple[frozenset[str], frozenset[str]]:
        """The content stems of the previous message and of this one."""
        now = frozenset(stem(w) for w in query_terms(message, limit=64) if w not in self._generic)
        return previous.stems(self._generic), now

    def _repeated(
        self,
        previous: PreviousTurn,
        message: str,
        signal: str,
        gap: float | None,
        words: tuple[frozenset[str], frozenset[str]],
    ) -> Feedback | None:
        before, now = words
        same_text = " ".join(message.casefold().split()) == " ".join(previous.text.casefold().split())
        if same_text and previous.text and gap is not None and gap <= self.duplicate_window:
            return Feedback(FeedbackType.REPEATED_QUESTION, 0.0, signal, "repeat", "duplicate", duplicate=True)
        similar = len(now) >= 2 and len(before & now) / len(before | now) >= self.repeat_similarity
        if (same_text and previous.text) or similar:
            return Feedback(FeedbackType.REPEATED_QUESTION, SCORES[FeedbackType.REPEATED_QUESTION], signal, "repeat")
        return None

    def _same_topic(self, words: tuple[frozenset[str], frozenset[str]]) -> bool:
        before, now = words
        shared = before & now
        return bool(shared) and len(shared) / max(1, min(len(before), len(now))) >= self.same_topic_overlap

    def _from_topic(
        self,
        previous: PreviousTurn,
        message: str,
        signal: str,
        gap: float | None,
        words: tuple[frozenset[str], frozenset[str]] | None = None,
    ) -> Feedback:
        words = words or self._word_sets(previous, message)
        repeated = self._repeated(previous, message, signal, gap, words)
        if repeated is not None:
            return repeated
        same_topic = self._same_topic(words)
        # §4.4: refinement keywords count on the same topic, or in a short elliptical follow-up ("what about May?").
        refinement = self._re["refinement"].search(message)
        if refinement and (same_topic or len(words[1]) <= self.elliptical_terms):
            kind = FeedbackType.FOLLOW_UP_REFINEMENT
            return Feedback(kind, SCORES[kind], signal, "keywords", refinement.group(0))
        mild = None if message.rstrip().endswith("?") else self._re["mild_positive"].search(message)
        if mild is not None:
            return Feedback(FeedbackType.EXPLICIT_POSITIVE, MILD_POSITIVE_SCORE, signal, "keywords", mild.group(0))
        kind = FeedbackType.FOLLOW_UP_SAME_TOPIC if same_topic else FeedbackType.FOLLOW_UP_NEW_TOPIC
        return Feedback(kind, SCORES[kind], signal, "topic")


def _clip(text: str, limit: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
