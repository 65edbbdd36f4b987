"""observe(): after each turn, read the user's reaction to the previous answer and keep what this turn taught.

1. A repeat of the user's latest message within 30 s (seed 001 §8.6), in any session and on any channel, is not
   a new turn: nothing is learned and nothing is judged; the result names the turn it repeats.
2. Feedback on the previous turn: positive feedback promotes the candidate it produced and raises the
   streaks of what was retrieved for it; negative feedback demotes or deprecates what was retrieved. When
   the tenant's `loop.tools` has a window for the session, its score also goes to the query templates the
   previous turn's tool calls reinforced (seed 001 §4.4).
3. Artifacts from the rule observer (and from the LLM extractor when a model is configured) go through the
   governed write as candidates. Texts learnloop itself put into the prompt are never extracted again.
4. The turn is remembered (message hash, content words, retrieved and saved ids — no message text).

The turn record follows the *redact* policy (`fields`): its hash and terms are of the message with every span
the write gate refuses replaced by its kind. A message the gate refuses is a refused turn: it is remembered
(so a retry is still a duplicate, and its feedback still reaches the previous turn) with no terms, and nothing
is extracted from it. The session id follows the *hash* policy.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from ..engine import Engine
from ..errors import ConflictError, ValidationError
from ..governance import discredit, report_failure, status_update
from ..lifecycle import evidence_promotion
from ..models import LearningType, Origin, RetrievalResult, Scope, Source, Status
from ..simhash import hamming, simhash64
from ..stores.base import Operation, TurnRecord, Update
from ..terms import query_terms
from ..tools.intelligence import live_tools
from .artifacts import MAX_ARTIFACT_CHARS, Artifact, ObserveContext
from .carried import Carried
from .channel_scope import channel_tag, said_for_channel
from .evidence import GENERIC, profile
from .feedback import DISCREDITING, Feedback, FeedbackType, PreviousTurn
from .fields import identifier, redact_text
from .poisoning_model import VECTOR_MODELS
from .whole_turn import (
    calibration,
    carry,
    confirmed_answer,
    measured_outcome,
    own_part,
    recurring_preference,
    retracted,
    session_correction,
)
from .write import SaveAction, SaveRequest, SaveResult, save

__all__ = ["DUPLICATE_WINDOW_SECONDS", "FeedbackOutcome", "ObserveResult", "ShownLearning", "message_hash", "observe"]

DUPLICATE_WINDOW_SECONDS = 30.0
_STORED = (SaveAction.CREATED, SaveAction.NEW_VERSION, SaveAction.MERGED)


class FeedbackOutcome(BaseModel):
    type: str
    score: float
    signal: str = ""
    promoted: list[int] = Field(default_factory=list)
    demoted: list[int] = Field(default_factory=list)
    deprecated: list[int] = Field(default_factory=list)
    reinforced: list[int] = Field(default_factory=list)
    reset: list[int] = Field(default_factory=list)
    templates: list[int] = Field(default_factory=list)  # query templates of the tool layer the verdict reached


class ObserveResult(BaseModel):
    session: str
    turn: int
    duplicate: bool = False
    feedback: FeedbackOutcome | None = None
    artifacts: int = 0
    saved: list[SaveResult] = Field(default_factory=list)

    @property
    def stored(self) -> list[SaveResult]:
        return [r for r in self.saved if r.stored]


@dataclass(frozen=True)
class ShownLearning:
    """A learning that was put in the prompt for the turn, as a turn recorded it (`learnloop.turns`): feedback
    reaches it when it was `used` (relevant enough to count) or the answer echoes it."""

    id: int
    text: str
    used: bool = True


Shown = RetrievalResult | Sequence[str] | Sequence[ShownLearning]


def message_hash(text: str, namespace: str = "", tags: Sequence[str] = ()) -> str:
    """What "the same message" is in the duplicate window (seed 001 §8.6): equal after Unicode compatibility
    normalisation (NFKC), case folding and collapsing runs of whitespace (punctuation and wording count), sent to
    the same namespace with the same tags (the same words in another scope are another request)."""
    normal = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    scoped = sorted({t.casefold() for t in tags})
    if namespace or scoped:
        normal = "\x1f".join([normal, namespace, *scoped])
    return hashlib.blake2b(normal.encode(), digest_size=12).hexdigest()


def _recalled(retrieved: Shown | None, answer: str) -> tuple[list[str], list[int]]:
    """The texts shown (never learned again) and the ids of those the answer used: feedback on the answer
    reaches only those — relevant enough to count, or echoed in the answer (its words or its values)."""
    if retrieved is None:
        return [], []
    if isinstance(retrieved, RetrievalResult):
        used = [i.learning.id for i in retrieved.items if i.used or echoed(i.learning.text, answer)]
        return [i.learning.text for i in retrieved.items], used
    shown = [s for s in retrieved if isinstance(s, ShownLearning)]
    if shown:
        return [s.text for s in shown], [s.id for s in shown if s.used or echoed(s.text, answer)]
    return [t for t in retrieved if isinstance(t, str)], []


def echoed(learning: str, answer: str) -> bool:
    """Does the answer repeat what the learning says: two of its salient words, or one of its values?"""
    if not answer.strip():
        return False
    said, shown = profile(answer), profile(learning)
    if len((said.terms & shown.terms) - GENERIC) >= 2:
        return True
    return any(q.meets(a) for q in shown.quantities for a in said.quantities if q.dimension)


async def observe(
    engine: Engine,
    scope: Scope,
    user_message: str,
    assistant_message: str = "",
    *,
    session: str = "default",
    retrieved: Shown | None = None,
    meta: Mapping[str, Any] | None = None,
    namespace: str = "learning",
    at: datetime | None = None,
    tags: Sequence[str] = (),
    refused: bool = False,
    channel: str = "",
) -> ObserveResult:
    """`refused`: `user_message` is already the redacted form of a message the gate refused (a turn stores only
    that): the previous turn is judged from it and nothing is learned, as for the message itself. `channel` is
    kept on the turn's record (the feedback figures are cut by it)."""
    if not isinstance(user_message, str) or not isinstance(assistant_message, str):
        raise ValidationError("user_message and assistant_message must be strings", field="user_message")
    meta = dict(meta or {})
    now = at or engine.clock()
    await engine.ensure_started()
    session = identifier(engine.gate, session) or session
    safe_message = redact_text(engine.gate, user_message)
    # Redaction returns the very same text when nothing is harmful.
    refused = refused or safe_message is not user_message
    digest = message_hash(safe_message, namespace, tags)
    recalled_texts, recalled_ids = _recalled(retrieved, assistant_message)
    own = Carried() if refused else own_part(engine, safe_message, assistant_message)
    claim = TurnRecord(
        session=session,
        turn=0,
        message_hash=digest,
        topic_terms=() if refused else tuple(query_terms(user_message)),
        retrieved_ids=tuple(recalled_ids),
        saved_ids=(),
        at=now,
        carried=own.data(),
        channel=channel,
    )
    # Claiming the turn is atomic: the same message sent twice at once (a client retry) counts once.
    previous, turn_number = await engine.store.claim_turn(scope, claim, DUPLICATE_WINDOW_SECONDS)
    if turn_number is None:  # `previous` is the turn this one repeats, maybe of another session or channel
        assert previous is not None
        return ObserveResult(session=previous.session, turn=previous.turn, duplicate=True)
    gap = None if previous is None else (now - previous.at).total_seconds()

    feedback = None
    if previous is not None:
        vector = None
        if engine.feedback.model is not None and engine.embedder.model_id in VECTOR_MODELS and safe_message.strip():
            vector = await engine.embed_one(safe_message)
        feedback = engine.feedback.analyze(
            PreviousTurn(terms=previous.topic_terms, at=previous.at),
            safe_message,
            gap_seconds=gap,
            meta=meta,
            vector=vector,
        )

    handed = Carried.of(None if previous is None else previous.carried)
    if refused:  # nothing is learned from a message the gate refuses
        outcome = await _judged(engine, scope, session, previous, feedback, ())
        kept = carry(own, handed, "", feedback=feedback, confirmed=(), corrections=())
        await _hand_on(engine, scope, replace(claim, turn=turn_number), own, kept)
        return ObserveResult(session=session, turn=turn_number, feedback=outcome, artifacts=0, saved=[])
    vocabulary = await engine.vocabulary(scope.tenant, namespace)
    context = ObserveContext(
        recalled=recalled_texts,
        vocabulary_categories=vocabulary.names,
        category_descriptions={c.name: c.description for c in vocabulary.categories},
        meta=meta,
    )
    # The message answers the previous reply: its predictions are what "I measured 1.046" is measured against.
    replied_to = "\n".join(part for part in (handed.claims, assistant_message) if part)
    artifacts = engine.observer.extract(user_message, replied_to, context=context)
    extractor = engine.extractor
    if extractor is not None:
        artifacts = _distinct([*artifacts, *await extractor.extract(user_message, assistant_message, context=context)])
    correction = session_correction(user_message, handed, artifacts, context)
    measured = measured_outcome(user_message, handed, artifacts, context)
    answer = confirmed_answer(handed, user_message, feedback, context)
    if answer is not None and extractor is not None:  # the model's rewrite of what the rules condensed
        rewritten = await extractor.condense(answer.text, answer.evidence, max_chars=MAX_ARTIFACT_CHARS)
        if rewritten is not None:
            answer = answer.model_copy(update={"text": rewritten})
        elif answer.rule == "answer.pattern":
            answer = None  # prose is stored only as the model condensed it
    extra = [a for a in (correction, measured, answer) if a is not None]
    run_tags = tuple(tags)
    if said_for_channel(user_message, channel):  # "on WhatsApp, keep it short": served on WhatsApp only
        run_tags = (*run_tags, channel_tag(channel))
    results = [
        await _save_artifact(engine, scope, artifact, session, meta, namespace, run_tags, now)
        for artifact in [*artifacts, *extra]
    ]
    results.extend(await _derived(engine, scope, results, session, namespace))
    saved_ids = tuple(r.learning.id for r in results if r.action in _STORED and r.learning is not None)
    outcome = await _judged(engine, scope, session, previous, feedback, saved_ids)
    if previous is not None:
        undone = await retracted(
            engine, scope, handed, user_message, feedback, f"session {session}, turn {previous.turn}"
        )
        if outcome is not None and undone:
            outcome.deprecated = sorted({*outcome.deprecated, *undone})
    # The answer's artifact is saved last of the turn's own (before what `_derived` adds).
    from_answer = results[len(artifacts) + len(extra) - 1] if answer is not None else None
    confirmed = (
        [from_answer.learning.id] if from_answer is not None and from_answer.stored and from_answer.learning else []
    )
    corrections = [
        r.learning.id
        for r in results
        if r.learning is not None
        and r.learning.type is LearningType.CORRECTION
        and (r.stored or r.action is SaveAction.SKIPPED)
    ]
    kept = carry(own, handed, user_message, feedback=feedback, confirmed=confirmed, corrections=corrections)
    await _hand_on(engine, scope, replace(claim, turn=turn_number, saved_ids=saved_ids), own, kept)
    return ObserveResult(
        session=session, turn=turn_number, feedback=outcome, artifacts=len(artifacts) + len(extra), saved=results
    )


async def _hand_on(engine: Engine, scope: Scope, record: TurnRecord, own: Carried, kept: Carried) -> None:
    """Rewrite the turn's record only when the turn added to what it was claimed with."""
    if kept != own or record.saved_ids:
        await engine.store.put_turn(scope, replace(record, carried=kept.data()))


async def _derived(
    engine: Engine, scope: Scope, results: list[SaveResult], session: str, namespace: str
) -> list[SaveResult]:
    """What this turn's learnings add up to with earlier ones: a correction made in a second session becomes a
    preference; a second measurement off the prediction the same way becomes a calibration."""
    derived: list[SaveResult] = []
    for result in results:
        if result.learning is None or not (result.stored or result.action is SaveAction.SKIPPED):
            continue  # a correction made again is skipped as a duplicate of the first, and still counts
        for step in (recurring_preference, calibration):
            made = await step(engine, scope, result, session, namespace)
            if made is not None:
                derived.append(made)
    return derived


async def _judged(
    engine: Engine,
    scope: Scope,
    session: str,
    previous: TurnRecord | None,
    feedback: Feedback | None,
    saved_ids: tuple[int, ...],
) -> FeedbackOutcome | None:
    """The verdict on the previous turn, acted on once this turn's own learnings are saved (an `outdated`
    verdict is superseded by what the user says is true now)."""
    outcome = None
    if previous is not None and feedback is not None:
        outcome = await _apply_feedback(engine, scope, previous, feedback, saved_ids)
    tools = live_tools(engine, scope.tenant)
    if tools is not None:  # the same verdict moves the query templates the previous turn's tool calls used
        moved = await tools.observed_turn(session, None if outcome is None else outcome.score, user=scope.user)
        if outcome is not None:
            outcome.templates = [t.id for t in moved]
    return outcome


# A statement about something else moves on as a new topic does: the answer was not built on.
_STREAK_ENDS = frozenset({FeedbackType.FOLLOW_UP_NEW_TOPIC, FeedbackType.NEW_STATEMENT, FeedbackType.UNCLEAR})
_DOUBTING = frozenset({FeedbackType.UNCLEAR, FeedbackType.EXPLICIT_NEGATIVE})


def _distinct(artifacts: list[Artifact]) -> list[Artifact]:
    """The rules and the LLM often find the same thing; keep the first of near-identical texts."""
    kept: list[Artifact] = []
    hashes: list[int] = []
    for artifact in artifacts:
        digest = simhash64(artifact.text)
        if all(hamming(digest, other) > 6 for other in hashes):
            kept.append(artifact)
            hashes.append(digest)
    return kept


async def _save_artifact(
    engine: Engine,
    scope: Scope,
    artifact: Artifact,
    session: str,
    meta: Mapping[str, Any],
    namespace: str,
    run_tags: tuple[str, ...],
    at: datetime,
) -> SaveResult:
    """Tags are scope (seed 004's filter-based isolation): a learned memory carries the run's tags, and only
    them. Words the observer or extractor derived describe it and go to its topic, where they never block a
    dedupe decision and still reach keyword search."""
    message_id = meta.get("message_id")
    interaction_id = meta.get("interaction_id")
    return await save(
        engine,
        scope,
        SaveRequest(
            text=artifact.text,
            user=scope.user,
            namespace=namespace,
            category=artifact.category,
            type=LearningType(artifact.type),
            topic=_topic(artifact),
            tags=run_tags,
            status=Status.CANDIDATE,
            confidence=min(artifact.confidence, engine.policy.observer_confidence),
            origin=Origin.OBSERVER,
            source=Source(
                session=session,
                message=None if message_id is None else str(message_id),
                interaction=None if interaction_id is None else str(interaction_id),
                context=_context(artifact),
            ),
            actor=f"observer:{artifact.rule}" if artifact.rule else "observer",
            at=at,
        ),
    )


def _context(artifact: Artifact) -> str:
    if artifact.rule.startswith("answer.") and artifact.evidence:
        return f"the answer to: {artifact.evidence}"[:200]
    return f"observed by rule {artifact.rule}"


def _topic(artifact: Artifact) -> str:
    words = [t for t in artifact.tags if t.casefold() not in artifact.topic.casefold()]
    return " ".join([artifact.topic, *words]).strip()[:200]


async def _apply_feedback(
    engine: Engine, scope: Scope, previous: TurnRecord, feedback: Feedback, saved_ids: tuple[int, ...]
) -> FeedbackOutcome:
    """Act on the verdict about the previous turn and remember it on that turn's record. `retrieved_ids` are
    the learnings the previous answer used (`_recalled`): only they take the verdict."""
    outcome = FeedbackOutcome(type=feedback.type.value, score=feedback.score, signal=feedback.signal_text)
    at = f"session {previous.session}, turn {previous.turn}"
    if feedback.type in DISCREDITING and previous.retrieved_ids:
        reason = f"{feedback.type.value} of the answer that used it ({at}): {feedback.signal_text}"
        changed = await discredit(engine, scope, previous.retrieved_ids, "feedback", reason)
        outcome.deprecated = [learning.id for learning in changed]
    elif feedback.type is FeedbackType.OUTDATED and previous.retrieved_ids:
        replacement = saved_ids[0] if len(saved_ids) == 1 else None
        reason = f"no longer true ({at}): {feedback.signal_text}"
        changed = await discredit(engine, scope, previous.retrieved_ids, "feedback", reason, superseded_by=replacement)
        outcome.deprecated = [learning.id for learning in changed]
    elif feedback.type in _DOUBTING and feedback.score < 0 and previous.retrieved_ids:
        # Frustration is about the assistant, not which learning misled it, and a torn reading is unsure: what was
        # verified is demoted, nothing is lost.
        before = await engine.store.get_many(scope, list(previous.retrieved_ids))
        verified = {learning.id for learning in before if learning.status is Status.VERIFIED}
        reason = f"{feedback.type.value}: {feedback.signal_text}"
        changed = await report_failure(engine, scope, previous.retrieved_ids, "feedback", reason, spare_candidates=True)
        outcome.demoted = [learning.id for learning in changed if learning.id in verified]
    elif feedback.score < 0 and previous.retrieved_ids:
        changed = await report_failure(
            engine, scope, previous.retrieved_ids, "feedback", f"{feedback.type.value}: {feedback.signal_text}"
        )
        outcome.demoted = [learning.id for learning in changed if learning.status is Status.CANDIDATE]
        outcome.deprecated = [learning.id for learning in changed if learning.status is Status.DEPRECATED]
    elif feedback.type in _STREAK_ENDS and previous.retrieved_ids:
        # The user moved on, or may be unhappy: what was retrieved did not carry the conversation, so its run of
        # positive retrievals ends (no failure is counted; the hits stay and can still promote it).
        learnings = await engine.store.get_many(scope, list(previous.retrieved_ids))
        resets: list[Operation] = [
            Update(learning.id, {"streak": 0}, None)
            for learning in learnings
            if learning.streak and scope.owns(scope.tenant, learning.user) and learning.status is not Status.DEPRECATED
        ]
        if resets:
            await engine.apply(scope, resets)
            outcome.reset = [op.id for op in resets if isinstance(op, Update)]
    elif feedback.score >= 0.5:
        learnings = await engine.store.get_many(scope, [*previous.saved_ids, *previous.retrieved_ids])
        ops: list[Operation] = []
        for learning in learnings:
            if not scope.owns(scope.tenant, learning.user) or learning.status is Status.DEPRECATED:
                continue
            if learning.id in previous.saved_ids and learning.status is Status.CANDIDATE:
                confidence = max(learning.confidence, engine.policy.confirmation_confidence)
                ops.append(
                    status_update(learning, Status.VERIFIED, "feedback", feedback.type.value, confidence=confidence)
                )
                outcome.promoted.append(learning.id)
            elif learning.id in previous.retrieved_ids:
                raised = learning.model_copy(update={"streak": learning.streak + 1})
                promotion = evidence_promotion(raised, engine.policy)
                if promotion is not None:
                    ops.append(
                        status_update(
                            learning,
                            Status.VERIFIED,
                            "feedback",
                            promotion.reason,
                            confidence=promotion.confidence,
                            extra={"streak": raised.streak},
                        )
                    )
                    outcome.promoted.append(learning.id)
                else:
                    ops.append(Update(learning.id, {"streak": raised.streak}, None, expect_revision=learning.revision))
                outcome.reinforced.append(learning.id)
        if ops:
            try:
                await engine.apply(scope, ops)
            except ConflictError:
                outcome.promoted, outcome.reinforced = [], []  # changed meanwhile; the next signal will count
    await engine.store.put_turn(
        scope,
        TurnRecord(
            session=previous.session,
            turn=previous.turn,
            message_hash=previous.message_hash,
            topic_terms=previous.topic_terms,
            retrieved_ids=previous.retrieved_ids,
            saved_ids=previous.saved_ids,
            at=previous.at,
            feedback_type=feedback.type.value,
            feedback_score=feedback.score,
            channel=previous.channel,
        ),
    )
    return outcome
