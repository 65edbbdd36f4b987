"""The rule-based turn observer: candidate learnings from one turn, with no LLM.

`RuleObserver.extract(user_message, assistant_message, context=…)` reads the *user's* message sentence by
sentence and returns `Artifact`s — corrections, measured-versus-predicted numbers, stated preferences,
environment facts and procedures that worked — each rewritten as a reusable third-person statement with its
numbers and units unchanged. The assistant's message is context only (what value it had predicted, what a
correction refers to); nothing is ever extracted from it.

Precision over recall: the market leader's users found 97.8% of stored memories were junk. So questions,
hypotheticals ("if I prefer…"), pronoun-only subjects ("I love that!"), vague objects ("I have a question"),
quoted or fenced text, and anything restating what learnloop itself recalled into the prompt yield nothing.

Speed: a single pre-compiled trigger regex rejects most turns before any rule runs; rules are compiled once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..models import LearningType
from ..terms import STOPWORDS, query_terms, stem
from .artifacts import MAX_ARTIFACT_CHARS, Artifact, ObserveContext, RecallGuard, strip_recalled_block
from .phrasing import PRONOUN_HEADS, capitalize, normalize, parse_values, sentences, third_person, user_clause
from .rules import DEFAULT_RULES
from .turn import Draft, Rule, TurnView, content_terms, hedged

__all__ = ["CORRECTION_LEADS", "ObserveContext", "RuleObserver", "category_hint"]

#: Openings that mark the rest of a sentence (or the next one, after a bare "No.") as a correction.
CORRECTION_LEADS: tuple[str, ...] = (
    r"no(?!\s+(?:problem|worries|thanks|need|doubt|idea|way|rush|big deal|matter|one)\b)",
    r"nope", r"nah", r"wrong", r"incorrect", r"not quite", r"not really", r"not exactly", r"actually", r"in fact",
    r"correction", r"you're wrong", r"you are wrong",
    r"that's (?:wrong|not right|not correct|incorrect|not true|not it|not what i meant)",
    r"that is (?:wrong|not right|not correct|incorrect|not true)",
)  # fmt: skip
_LEAD = re.compile(
    r"^(?:(?:oh|well|hmm|um|sorry|but|ah),?\s+)?(?P<lead>" + "|".join(CORRECTION_LEADS) + r")(?P<sep>[\s,.:;!-]+|$)"
    r"(?P<rest>.*)$",
    re.IGNORECASE,
)
# A question without its "?" (chat users drop it). "Do not …" and "Don't …" open orders, not questions.
_QUESTION = re.compile(
    r"^(?:can|could|would|will|do(?!\s+not\b)|does|did|is|are|should|shall|may|how|why|which|who|whom|what's|"
    r"what is|what are|where|when)\b(?!\s+(?:worked|fixed))",
    re.IGNORECASE,
)
_MEANT = re.compile(r"\bI meant\s+(?P<new>[^,;]+?),?\s+(?:not|instead of|rather than)\s+(?P<old>[^,;]+)$", re.I)
_NOT_BUT = (
    re.compile(r"^(?:it's|it is|its|that's|that is|they're|they are)\s+not\s+(?P<old>[^,;]+?)[,;]?\s+(?:it's|it is|"
               r"its|but|they're|they are)\s+(?P<new>[^,;]+)$", re.I),
    re.compile(r"^(?:it's|it is|its|that's|that is|they're|they are)\s+(?:actually\s+)?(?P<new>[^,;]+?),?\s+not\s+"
               r"(?P<old>[^,;]+)$", re.I),
)  # fmt: skip
_STATEMENT = re.compile(
    r"^(?:the\s+)?(?P<subj>(?:[\w'./-]+\s){0,5}?[\w'./-]+)\s+(?P<verb>is|are|was|were|returns|uses|needs|takes|has|"
    r"runs|should be|must be|boils off|averages|holds|supports|expects|stores|defaults to|attenuates|comes in at)\s+"
    r"(?P<obj>.+)$",
    re.IGNORECASE,
)
_VALUE_LEAD = re.compile(r"^(?:it's|it is|its|that's|that is|it was|more like|closer to|about|around|~|≈)?\s*\d", re.I)
_NOT = re.compile(r"\bnot\b", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.I)
_CORRECTION_WORDS = ("no", "nope", "nah", "wrong", "incorrect", "actually", "in fact", "correction", "meant", "not")
_TYPE_CATEGORIES = {t: (t.value, t.value + "s") for t in LearningType}


@dataclass(frozen=True)
class _Found:
    draft: Draft
    type: LearningType
    rule: str
    confidence: float
    evidence: str


# "We're on BigQuery, not Snowflake": the contrast after the clause is part of the statement.
_NOT_TAIL = re.compile(r"^\s*,?\s*(?P<how>not|rather than|instead of)\s+(?P<what>[^,;]{1,60}?)\s*(?:[,;]|$)", re.I)


def category_hint(kind: LearningType, text: str, context: ObserveContext) -> str | None:
    """A category from the namespace vocabulary: one named after the type ("correction"), else the one whose
    name or description shares the most content words with the statement, else None."""
    names = list(context.vocabulary_categories)
    if not names:
        return None
    for name in _TYPE_CATEGORIES[kind]:
        if name in names:
            return name
    # A category named in the statement counts double; one shared description word alone is too weak a hint
    # (a wrong category is worse than none: it files the learning under the wrong tab).
    mine = {stem(w) for w in content_terms(text)}
    best, best_score = None, 1
    for name in names:
        named = {stem(w) for w in query_terms(name.replace("_", " "))}
        described = {stem(w) for w in query_terms(context.category_descriptions.get(name, ""), limit=64)}
        score = 2 * len(mine & named) + len(mine & (described - named))
        if score > best_score:
            best, best_score = name, score
    return best


class RuleObserver:
    """Rule-based artifact extraction. `rules` replaces the defaults; `extra_rules` run after them."""

    def __init__(
        self,
        rules: Sequence[Rule] = DEFAULT_RULES,
        *,
        extra_rules: Sequence[Rule] = (),
        max_artifacts: int = 5,
        max_chars: int = 4000,
    ) -> None:
        self.rules: tuple[Rule, ...] = (*rules, *extra_rules)
        self.max_artifacts = max_artifacts
        self.max_chars = max_chars
        triggers = {t.casefold() for rule in self.rules for t in rule.triggers} | set(_CORRECTION_WORDS)
        alternatives = sorted((re.escape(t) for t in triggers), key=len, reverse=True)
        self._prefilter = re.compile("|".join(alternatives), re.IGNORECASE)
        self._correctable = tuple(r for r in self.rules if r.correctable)
        # Per rule, the same cheap test on each sentence: most sentences skip most rules' regexes.
        self._gates = {r.id: tuple(t.casefold() for t in r.triggers) for r in self.rules}

    def with_rules(self, *rules: Rule) -> RuleObserver:
        return RuleObserver(self.rules, extra_rules=rules, max_artifacts=self.max_artifacts, max_chars=self.max_chars)

    def extract(
        self, user_message: str, assistant_message: str = "", *, context: ObserveContext | None = None
    ) -> list[Artifact]:
        context = context or ObserveContext()
        user = strip_recalled_block(user_message or "")[: self.max_chars]
        if not user.strip() or not self._prefilter.search(user):
            return []
        turn = TurnView(normalize(user), normalize(strip_recalled_block(assistant_message or "")))
        found = self._scan(turn)
        if not found:
            return []
        guard = RecallGuard(context.recalled)
        artifacts: list[Artifact] = []
        seen: set[str] = set()
        for item in found:
            text = _finish(item.draft.text)
            key = " ".join(text.casefold().split())
            if key in seen or not 12 <= len(text) <= MAX_ARTIFACT_CHARS or (guard and guard.matches(text)):
                continue
            seen.add(key)
            topic = item.draft.topic.strip() or " ".join(content_terms(text)[:3])
            artifacts.append(
                Artifact(
                    text=text,
                    type=item.type,
                    category=category_hint(item.type, text, context),
                    topic=topic[:200],
                    tags=content_terms(topic)[:4],
                    confidence=item.confidence,
                    rule=item.rule,
                    evidence=item.evidence,
                )
            )
            if len(artifacts) >= self.max_artifacts:
                break
        return artifacts

    # ---- scanning ----------------------------------------------------------------------------------------

    def _scan(self, turn: TurnView) -> list[_Found]:
        found: list[_Found] = []
        parts = list(sentences(turn.user))
        skip_next = False
        for index, sentence in enumerate(parts):
            if skip_next:
                skip_next = False
                continue
            if sentence.endswith("?") or _QUESTION.match(sentence):
                continue
            core = sentence.rstrip(" .!")
            lead = _LEAD.match(core)
            if lead and _real_lead(lead):
                rest = lead.group("rest").strip(" ,.!")
                if not rest and index + 1 < len(parts) and not parts[index + 1].endswith("?"):
                    rest, skip_next = parts[index + 1].rstrip(" .!"), True
                item = self._correction(rest, turn, sentence) if rest else None
                if item is not None:
                    found.append(item)
                    continue
            item = _contrast(core, turn, sentence)
            if item is not None:
                found.append(item)
                continue
            found.extend(self._rules(core, turn, sentence, self.rules))
        return found

    def _rules(self, text: str, turn: TurnView, evidence: str, rules: Sequence[Rule]) -> list[_Found]:
        found: list[_Found] = []
        taken: list[tuple[int, int]] = []
        lowered = text.casefold() + " "
        for rule in rules:
            gate = self._gates.get(rule.id)
            if gate and not any(t in lowered for t in gate):
                continue
            for match in rule.pattern.finditer(text):
                span = match.span()
                if any(span[0] < end and start < span[1] for start, end in taken):
                    continue  # an earlier, more specific rule already read this part of the sentence
                draft = rule.render(match, turn)
                if draft is not None:
                    tail = _NOT_TAIL.match(text[span[1] :])
                    if tail and " not " not in f" {draft.text} ":
                        how, what = tail.group("how").casefold(), third_person(tail.group("what").strip(" ."))
                        draft = Draft(f"{draft.text}, {how} {what}", draft.topic)
                    taken.append(span)
                    found.append(_Found(draft, rule.type, rule.id, rule.confidence, evidence))
        return found

    def _correction(self, rest: str, turn: TurnView, evidence: str) -> _Found | None:
        """The rest of a sentence that opened with "No," / "Actually," / "That's wrong,": what is true instead."""
        ruled = self._rules(rest, turn, evidence, self._correctable)
        if ruled:
            return _Found(ruled[0].draft, LearningType.CORRECTION, f"correction.{ruled[0].rule}", 0.75, evidence)
        contrast = _contrast(rest, turn, evidence)
        if contrast is not None:
            return contrast
        # "No, we use tabs, not spaces": too plain for the environment rules, but the user is setting straight
        # something the assistant said ("spaces"), which is signal enough.
        clause, _, tail = rest.partition(",")
        first_person = user_clause(clause.strip())
        negated = _NOT_TAIL.match("," + tail) if tail else None
        if first_person and negated and _said(negated.group("what"), turn) and content_terms(clause):
            text = f"{first_person}, {negated.group('how').casefold()} {third_person(negated.group('what'))}"
            return _Found(Draft(text, clause), LearningType.CORRECTION, "correction.first_person", 0.7, evidence)
        statement = _STATEMENT.match(rest)
        values = parse_values(rest)
        if statement and statement.group("subj").split()[0].casefold() not in PRONOUN_HEADS | {"i", "we"}:
            subject = statement.group("subj")
            # Only a correction of something the assistant said: the subject or claim must appear in its answer.
            if not turn.assistant or not turn.mentions(rest) or hedged(statement):
                return None
            text = capitalize(third_person(rest))
            claim = turn.claim_for(values[0], subject) if values and not _NOT.search(rest) else None
            if claim is not None and set(content_terms(claim.subject)) & set(content_terms(subject)):
                text += f", not {claim.value.text}"
            return _Found(Draft(text, subject), LearningType.CORRECTION, "correction.statement", 0.75, evidence)
        if values and _VALUE_LEAD.match(rest):
            claim = turn.claim_for(values[0])
            if claim is None:
                return None
            tail = rest[rest.find(values[0].text) + len(values[0].text) :].strip(" ,.")
            tail = f" {third_person(tail)}" if tail and len(tail.split()) <= 8 else ""
            text = f"{capitalize(claim.subject)} is {values[0].text}{tail}, not {claim.value.text}"
            return _Found(Draft(text, claim.subject), LearningType.CORRECTION, "correction.value", 0.75, evidence)
        return None


def _real_lead(lead: re.Match[str]) -> bool:
    # "No kids today" is not a correction: a bare "no" needs punctuation after it, nothing else, or a subject next.
    if lead.group("lead").casefold() != "no" or lead.group("sep").strip() or not lead.group("rest").strip():
        return True
    first = lead.group("rest").split()[0].casefold()
    return first in {"it's", "it", "its", "that's", "the", "my", "our", "i", "we", "i'm", "we're", "you"}


def _contrast(text: str, turn: TurnView, evidence: str) -> _Found | None:
    """ "I meant X, not Y" and "It's X, not Y" / "It's not Y, it's X", where the assistant had said Y."""
    meant = _MEANT.search(text)
    if meant is not None and not hedged(meant):
        new, old = meant.group("new").strip(), meant.group("old").strip(" .")
        draft = Draft(f"User meant {third_person(new)}, not {third_person(old)}", topic=new)
        return _Found(draft, LearningType.CORRECTION, "correction.meant", 0.75, evidence)
    for pattern in _NOT_BUT:
        match = pattern.match(text)
        if match is None:
            continue
        new, old = match.group("new").strip(" ."), match.group("old").strip(" .")
        subject = _subject_of(old, turn)
        if subject is None:
            # The assistant said `old` without a subject we can name ("in your Flask app"): still worth keeping.
            if not _said(old, turn):
                return None
            draft = Draft(f"Correction: {third_person(new)}, not {third_person(old)}", topic=_ARTICLE.sub("", new))
            return _Found(draft, LearningType.CORRECTION, "correction.contrast", 0.7, evidence)
        draft = Draft(f"{subject} is {third_person(new)}, not {third_person(old)}", topic=subject)
        return _Found(draft, LearningType.CORRECTION, "correction.contrast", 0.75, evidence)
    return None


def _said(old: str, turn: TurnView) -> bool:
    bare = _ARTICLE.sub("", old).casefold()
    return bool(bare) and re.search(rf"(?<!\w){re.escape(bare)}(?!\w)", turn.assistant.casefold()) is not None


def _subject_of(old: str, turn: TurnView) -> str | None:
    """What the assistant said was `old`: "Since your kettle is a Grainfather G30" → "User's kettle"."""
    bare = _ARTICLE.sub("", old)
    if not _said(old, turn):
        return None
    pattern = re.compile(
        r"(?P<pre>[\w' /-]{1,60}?)\s+(?:is|are|was|uses|has|of|at|:)\s+(?:a\s+|an\s+|the\s+)?(?:[\w-]+\s)?"
        + re.escape(bare),
        re.IGNORECASE,
    )
    match = pattern.search(turn.assistant)
    if match is None:
        return None
    kept: list[str] = []
    owner = ""
    for word in reversed(match.group("pre").split()):  # read the subject backwards up to its determiner
        low = word.casefold()
        if low in PRONOUN_HEADS or low in STOPWORDS or len(kept) == 3:
            owner = low
            break
        kept.append(word)
    subject = " ".join(reversed(kept))
    if not content_terms(subject):
        return None
    return f"User's {subject}" if owner in ("your", "yours") else capitalize(subject)


def _finish(text: str) -> str:
    text = " ".join(text.split()).strip(" ,;:-")
    return capitalize(text.rstrip("."))
