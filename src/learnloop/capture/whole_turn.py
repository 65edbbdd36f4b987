"""Learning from the whole turn, not only the user's message (seed 004's artifacts, seed 001 §8.7).

`observe` calls these around its own extraction:
- `confirmed_answer`: the previous answer's procedure or snippet, once this message confirms it worked;
- `session_correction`: "No, I meant last month" read against the previous question;
- `retracted`: learnings saved from an answer that this message says broke something (deprecated);
- `recurring_preference`: a correction made in two sessions becomes a preference;
- `calibration`: repeated measured-versus-predicted deviations on one subject become one calibration fact;
- `carry`: what this turn hands to the next one (`carried.Carried`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from statistics import mean

from ..engine import Engine
from ..governance import discredit
from ..models import LearningType, Origin, Scope, Source, Status
from ..stores.base import ListQuery
from .answers import answer_artifact, prose_artifact
from .artifacts import Artifact, ObserveContext
from .carried import Carried, numbered_sentences
from .feedback import DISCREDITING, Feedback, FeedbackType
from .fields import harmful, redact_text
from .meant import meant
from .measured import measured_against_answer
from .observer import category_hint
from .worked import deferred, taken_back, worked
from .write import SaveRequest, SaveResult, save

__all__ = [
    "calibration",
    "carry",
    "confirmed_answer",
    "confirms",
    "measured_outcome",
    "own_part",
    "recurring_preference",
    "retracted",
    "session_correction",
]

_CONFIRMING = frozenset({FeedbackType.EXPLICIT_POSITIVE})
_RETRACTING = DISCREDITING | {FeedbackType.EXPLICIT_NEGATIVE}
_MAX_CORRECTIONS = 8
_MAX_WAIT = 3


def confirms(message: str, feedback: Feedback | None) -> bool:
    """Does this message say the answer worked? The feedback verdict, or — in a message that goes on to something
    else ("ok that did the trick. next question: …"), which the verdict reads as a follow-up — the words."""
    if feedback is None:
        return False
    if feedback.source == "meta":
        return feedback.score >= 0.5
    if feedback.score < 0 or feedback.type in _RETRACTING or taken_back(message):
        return False
    if worked(message):
        return True
    # Thanks alone: the answer helped, and nothing says it has not been tried yet.
    return feedback.type in _CONFIRMING and feedback.score >= 0.5 and not deferred(message)


def confirmed_answer(
    previous: Carried, message: str, feedback: Feedback | None, context: ObserveContext
) -> Artifact | None:
    """The waiting answer artifact when this message (or its `meta`) says the answer worked."""
    if previous.artifact is None or not confirms(message, feedback):
        return None
    proposed = previous.artifact
    return _artifact(proposed.text, proposed.type, proposed.topic, 0.7, proposed.rule, proposed.question, context)


def session_correction(
    message: str, previous: Carried, found: Sequence[Artifact], context: ObserveContext
) -> Artifact | None:
    """ "No, I meant last month" after "revenue for last week": what was misread comes from the previous turn."""
    if any(a.type is LearningType.CORRECTION for a in found):
        return None
    correction = meant(message, previous.question, previous.claims)
    if correction is None:
        return None
    kind = LearningType.CORRECTION
    return _artifact(correction.text, kind, correction.new, 0.75, "correction.meant_previous", message, context)


def measured_outcome(
    message: str, previous: Carried, found: Sequence[Artifact], context: ObserveContext
) -> Artifact | None:
    """ "You said 1.050 but I measured 1.046": the previous answer's prediction, the question as its subject."""
    if any(a.rule.startswith("measured.") for a in found):
        return None
    text = measured_against_answer(message, previous.claims, previous.question)
    if text is None:
        return None
    kind = LearningType.FACT
    return _artifact(text, kind, previous.question, 0.65, "measured.against_answer", message, context)


def _artifact(
    text: str, kind: LearningType, topic: str, confidence: float, rule: str, evidence: str, context: ObserveContext
) -> Artifact:
    return Artifact(
        text=text,
        type=kind,
        category=category_hint(kind, text, context),
        topic=topic[:200],
        confidence=confidence,
        rule=rule,
        evidence=evidence,
    )


async def retracted(
    engine: Engine, scope: Scope, previous: Carried, message: str, feedback: Feedback | None, at_turn: str
) -> list[int]:
    """ "Actually that broke it": what the previous turn learned from the answer it confirmed is deprecated."""
    if not previous.confirmed or feedback is None:
        return []
    if not taken_back(message) and (feedback.type not in _RETRACTING or feedback.score >= 0):
        return []
    reason = f"{feedback.type.value} after the answer was confirmed ({at_turn}): {feedback.signal_text}"
    changed = await discredit(engine, scope, previous.confirmed, "feedback", reason)
    return [learning.id for learning in changed]


_MEANT_TEXT = re.compile(r"^User meant (?P<new>.+), not (?P<old>.+)$")


async def recurring_preference(
    engine: Engine, scope: Scope, saved: SaveResult, session: str, namespace: str
) -> SaveResult | None:
    """A correction the user has made in at least two sessions is a standing preference (seed 001 §8.7)."""
    learning = saved.learning
    if learning is None or learning.type is not LearningType.CORRECTION:
        return None
    match = _MEANT_TEXT.match(learning.text)
    if match is None:
        return None
    page = await engine.store.list_learnings(
        scope, ListQuery(user=scope.user, namespace=namespace, text=match.group("new"), limit=200)
    )
    sessions = {
        item.source.session
        for item in page.items
        if item.type is LearningType.CORRECTION and item.text == learning.text and item.status is not Status.DEPRECATED
    }
    sessions |= {learning.source.session, session}
    sessions.discard(None)
    if len(sessions) < 2:
        return None
    text = f"User usually means {match.group('new')} rather than {match.group('old')}"
    request = SaveRequest(
        text=text,
        user=scope.user,
        namespace=namespace,
        type=LearningType.PREFERENCE,
        topic=match.group("new")[:200],
        status=Status.VERIFIED,
        confidence=0.8,
        origin=Origin.OBSERVER,
        source=Source(session=session, context=f"corrected the same way in {len(sessions)} sessions"),
        actor="observer:correction.recurring",
    )
    return await save(engine, scope, request)


_MEASURED_TEXT = re.compile(
    r"^(?:Measured\s+)?(?P<subject>.+?) (?:was|took|attenuated to|fermented to|dropped to|came in at|finished at|"
    r"ran at) (?P<observed>-?[\d.,]+)\s*(?P<unit>[^,]*), (?:higher|lower|longer|shorter) than the predicted "
    r"(?P<predicted>-?[\d.,]+)"
)


async def calibration(
    engine: Engine, scope: Scope, saved: SaveResult, session: str, namespace: str
) -> SaveResult | None:
    """Two or more measurements of one subject off the prediction the same way: "User's OG runs ~0.004 lower
    than predicted (2 measurements)". Each measurement stays as it was said."""
    learning = saved.learning
    if learning is None or not learning.text.startswith(("Measured ", learning.topic[:1].upper() or "\0")):
        return None
    this = _deviation(learning.text)
    if this is None:
        return None
    subject, unit, _ = this
    page = await engine.store.list_learnings(
        scope, ListQuery(user=scope.user, namespace=namespace, text=subject, origin=Origin.OBSERVER, limit=200)
    )
    deviations = {learning.id: this[2]}
    for item in page.items:
        other = _deviation(item.text)
        if other is not None and other[0].casefold() == subject.casefold() and other[1] == unit:
            deviations[item.id] = other[2]
    values = list(deviations.values())
    if len(values) < 2 or not (all(v > 0 for v in values) or all(v < 0 for v in values)):
        return None
    average = mean(values)
    digits = max(_decimals(learning.text), 0)
    size = f"{abs(average):.{digits}f}".rstrip("0").rstrip(".") if digits else f"{abs(average):g}"
    direction = "higher" if average > 0 else "lower"
    owner = subject if subject.casefold().startswith("user") else f"User's {subject}"
    text = f"{owner} runs ~{size}{(' ' + unit) if unit else ''} {direction} than predicted ({len(values)} measurements)"
    request = SaveRequest(
        text=text,
        user=scope.user,
        namespace=namespace,
        type=LearningType.FACT,
        topic=subject[:200],
        status=Status.CANDIDATE,
        confidence=0.7,
        origin=Origin.OBSERVER,
        source=Source(session=session, context=f"calibrated from {len(values)} measurements"),
        actor="observer:measured.calibration",
    )
    return await save(engine, scope, request)


def _deviation(text: str) -> tuple[str, str, float] | None:
    match = _MEASURED_TEXT.match(text)
    if match is None:
        return None
    try:
        observed = float(match.group("observed").replace(",", ""))
        predicted = float(match.group("predicted").replace(",", ""))
    except ValueError:
        return None
    return match.group("subject").strip(), match.group("unit").strip(), observed - predicted


def _decimals(text: str) -> int:
    places = [len(n.split(".")[1]) for n in re.findall(r"\d+\.\d+", text)]
    return max(places, default=0)


def own_part(engine: Engine, user_message: str, assistant_message: str) -> Carried:
    """What this turn hands on of its own (the question, the answer's numbers and artifact): known before the turn
    is recorded, so it is written with the record and a plain turn costs no second write. `user_message` comes
    as the redact policy left it (the caller has read it through the gate already)."""
    proposed = answer_artifact(assistant_message, user_message)
    if proposed is None and engine.extractor is not None:  # prose only with a model to condense it
        proposed = prose_artifact(assistant_message, user_message)
    if proposed is not None and harmful(engine.gate, proposed.text):
        proposed = None  # the gate would refuse it when confirmed: nothing of it is held meanwhile
    return Carried(
        question=" ".join(user_message.split())[:300],
        claims=redact_text(engine.gate, numbered_sentences(assistant_message)),  # the gate reads only these
        artifact=proposed,
    )


def carry(
    own: Carried,
    previous: Carried,
    user_message: str,
    *,
    feedback: Feedback | None,
    confirmed: Sequence[int],
    corrections: Sequence[int],
) -> Carried:
    """What this turn hands to the next: its own part, and what the session still holds. An answer's artifact not
    yet confirmed waits through follow-up questions (up to `_MAX_WAIT` turns) unless this message took it back,
    confirmed it, or a new answer brought an artifact of its own."""
    in_force = tuple(dict.fromkeys([*corrections, *previous.corrections]))[:_MAX_CORRECTIONS]
    artifact, waited = own.artifact, 0
    settled = confirmed or taken_back(user_message)
    settled = settled or (feedback is not None and (feedback.type in _RETRACTING or feedback.score < 0))
    if artifact is None and previous.artifact is not None and not settled and previous.waited < _MAX_WAIT:
        artifact, waited = previous.artifact, previous.waited + 1
    return replace(own, artifact=artifact, waited=waited, confirmed=tuple(confirmed), corrections=in_force)
