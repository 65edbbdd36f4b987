"""Feedback on the previous answer: the seed 001 table as the keyword rules read it (the fallback when no model
ships, and the learned model's cues), its precedence traps, meta overrides and timing; then the learned model on
the follow-ups the relevance issue names."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from learnloop.capture.feedback import (
    CUE_NAMES,
    SCORES,
    FeedbackAnalyzer,
    FeedbackKeywords,
    FeedbackType,
    PreviousTurn,
)
from learnloop.capture.feedback_model import LABELS, decide

analyzer = FeedbackAnalyzer(model=None)
learned = FeedbackAnalyzer()
PREVIOUS = PreviousTurn("How much boil-off should I expect on a 60 minute boil with my Grainfather?")
T = FeedbackType

CASES: list[tuple[str, FeedbackType, float]] = [
    # explicit positive
    ("Thanks!", T.EXPLICIT_POSITIVE, 0.8),
    ("Perfect, that's exactly it.", T.EXPLICIT_POSITIVE, 0.8),
    ("That worked, thank you", T.EXPLICIT_POSITIVE, 0.8),
    ("no problem, thanks!", T.EXPLICIT_POSITIVE, 0.8),
    ("actually that worked great", T.EXPLICIT_POSITIVE, 0.8),
    ("Awesome, spot on", T.EXPLICIT_POSITIVE, 0.8),
    ("not bad", T.EXPLICIT_POSITIVE, 0.4),
    ("ok", T.EXPLICIT_POSITIVE, 0.4),
    ("Makes sense.", T.EXPLICIT_POSITIVE, 0.4),
    # corrections
    ("great, but the boil-off is actually 3.5", T.FOLLOW_UP_CORRECTION, -0.5),
    ("No, I meant last month, not last week", T.FOLLOW_UP_CORRECTION, -0.5),
    ("That's wrong.", T.FOLLOW_UP_CORRECTION, -0.5),
    ("nope, 3.5 L/hr", T.FOLLOW_UP_CORRECTION, -0.5),
    ("Actually it's 3.5 L/hr on mine", T.FOLLOW_UP_CORRECTION, -0.5),
    ("Thanks but that's not right", T.FOLLOW_UP_CORRECTION, -0.5),
    ("Not quite, try again", T.FOLLOW_UP_CORRECTION, -0.5),
    ("That's wrong, thanks anyway", T.FOLLOW_UP_CORRECTION, -0.5),
    # frustration
    ("This is useless.", T.EXPLICIT_NEGATIVE, -0.8),
    # failure: it was tried
    ("That doesn't work at all", T.FAILURE, -0.8),
    ("Still broken, thanks for nothing", T.FAILURE, -0.8),
    ("Show me that revenue broken down by product", T.FOLLOW_UP_REFINEMENT, 0.5),
    ("not great", T.EXPLICIT_NEGATIVE, -0.4),
    ("this is not helpful", T.EXPLICIT_NEGATIVE, -0.4),
    # refinement, same topic, new topic
    ("Can you break it down by hour?", T.FOLLOW_UP_REFINEMENT, 0.5),
    ("What about a 90 minute boil?", T.FOLLOW_UP_REFINEMENT, 0.5),
    ("And for a 90 minute boil on the Grainfather in winter?", T.FOLLOW_UP_SAME_TOPIC, 0.3),
    ("What's a good yeast for a dry stout?", T.FOLLOW_UP_NEW_TOPIC, 0.0),
    ("Good morning! Which hops suit a pilsner?", T.FOLLOW_UP_NEW_TOPIC, 0.0),
    ("Is that correct?", T.FOLLOW_UP_NEW_TOPIC, 0.0),  # praise words in a question are not praise
    # repetition
    ("How much boil-off should I expect on a 60 minute boil with my Grainfather?", T.REPEATED_QUESTION, -0.7),
    ("how much boil off should i expect on a 60 minute boil with my grainfather", T.REPEATED_QUESTION, -0.7),
]


@pytest.mark.parametrize(("message", "kind", "score"), CASES, ids=[c[0][:40] for c in CASES])
def test_feedback_table(message: str, kind: FeedbackType, score: float) -> None:
    feedback = analyzer.analyze(PREVIOUS, message, gap_seconds=90)
    assert (feedback.type, feedback.score) == (kind, score)
    assert len(feedback.signal_text) <= 100


def test_scores_follow_the_seed_table() -> None:
    assert SCORES == {
        T.EXPLICIT_POSITIVE: 0.8,
        T.FOLLOW_UP_REFINEMENT: 0.5,
        T.FOLLOW_UP_SAME_TOPIC: 0.3,
        T.NO_REPLY: 0.1,
        T.FOLLOW_UP_NEW_TOPIC: 0.0,
        T.FOLLOW_UP_CORRECTION: -0.5,
        T.REPEATED_QUESTION: -0.7,
        T.EXPLICIT_NEGATIVE: -0.8,
        T.FAILURE: -0.8,
        T.OUTDATED: -0.3,
        T.NEW_STATEMENT: 0.0,
        T.EXCLAMATION: 0.0,
        T.UNCLEAR: 0.0,
    }


@pytest.mark.parametrize(
    ("meta", "kind", "score"),
    [
        ({"validation_passed": True}, T.EXPLICIT_POSITIVE, 0.8),
        ({"validation_passed": "false"}, T.EXPLICIT_NEGATIVE, -0.8),
        ({"feedback": "positive"}, T.EXPLICIT_POSITIVE, 0.8),
        ({"feedback": "negative"}, T.EXPLICIT_NEGATIVE, -0.8),
        ({"feedback_score": -0.3}, T.EXPLICIT_NEGATIVE, -0.3),
        ({"validation_passed": False, "feedback": "positive"}, T.EXPLICIT_NEGATIVE, -0.8),  # the test result wins
    ],
)
def test_meta_signals_override_keywords(meta: dict[str, object], kind: FeedbackType, score: float) -> None:
    opposite = "Thanks, perfect!" if score < 0 else "This is useless."
    feedback = analyzer.analyze(PREVIOUS, opposite, gap_seconds=10, meta=meta)
    assert (feedback.type, feedback.score, feedback.source) == (kind, score, "meta")


def test_unknown_meta_values_fall_back_to_keywords() -> None:
    feedback = analyzer.analyze(PREVIOUS, "Thanks!", gap_seconds=10, meta={"feedback": "maybe", "other": 1})
    assert (feedback.type, feedback.source) == (T.EXPLICIT_POSITIVE, "keywords")


def test_no_reply_after_thirty_minutes_unless_the_message_says_more() -> None:
    later = analyzer.analyze(PREVIOUS, "What's a good yeast for a dry stout?", gap_seconds=31 * 60)
    assert (later.type, later.score, later.source) == (T.NO_REPLY, 0.1, "timing")
    still_wrong = analyzer.analyze(PREVIOUS, "That's wrong, it was 3.5 L/hr", gap_seconds=3 * 3600)
    assert still_wrong.type is T.FOLLOW_UP_CORRECTION
    assert analyzer.analyze(PREVIOUS, "", gap_seconds=None).type is T.NO_REPLY


def test_gap_comes_from_the_previous_turn_time_when_not_given() -> None:
    earlier = PreviousTurn(PREVIOUS.text, at=datetime.now(UTC) - timedelta(hours=2))
    assert analyzer.analyze(earlier, "Which hops suit a pilsner?").type is T.NO_REPLY
    recent = PreviousTurn(PREVIOUS.text, at=datetime.now(UTC) - timedelta(minutes=1))
    assert analyzer.analyze(recent, "Which hops suit a pilsner?").type is T.FOLLOW_UP_NEW_TOPIC


def test_rapid_duplicate_is_flagged_not_scored() -> None:
    feedback = analyzer.analyze(PREVIOUS, PREVIOUS.text, gap_seconds=5)
    assert (feedback.type, feedback.score, feedback.duplicate) == (T.REPEATED_QUESTION, 0.0, True)
    assert not analyzer.analyze(PREVIOUS, PREVIOUS.text, gap_seconds=120).duplicate


def test_first_message_of_a_session_rates_nothing() -> None:
    feedback = analyzer.analyze(None, "Thanks, that was great!")
    assert (feedback.type, feedback.score, feedback.source) == (T.FOLLOW_UP_NEW_TOPIC, 0.0, "none")


def test_previous_turn_may_be_given_as_terms_only() -> None:
    previous = PreviousTurn(terms=("boil", "grainfather", "minute"))
    assert analyzer.analyze(previous, "And the boil on the Grainfather in winter?", gap_seconds=30).type is (
        T.FOLLOW_UP_SAME_TOPIC
    )


def test_keyword_lists_are_data_apps_extend() -> None:
    assert analyzer.analyze(PREVIOUS, "Sehr gut", gap_seconds=10).type is T.FOLLOW_UP_NEW_TOPIC
    lists = FeedbackKeywords().extended(praise=("sehr gut",), frustration=("funktioniert nicht",))
    german = FeedbackAnalyzer(lists, model=None)  # with the model, the lists are cues it weighs
    assert german.analyze(PREVIOUS, "Sehr gut", gap_seconds=10).type is T.EXPLICIT_POSITIVE
    assert german.analyze(PREVIOUS, "Das funktioniert nicht", gap_seconds=10).type is T.EXPLICIT_NEGATIVE


def test_signal_text_is_clipped_and_names_what_decided() -> None:
    feedback = analyzer.analyze(PREVIOUS, "That's wrong " + "x" * 300, gap_seconds=10)
    assert len(feedback.signal_text) <= 100
    assert feedback.matched is not None and feedback.matched.casefold() == "that's wrong"
    assert feedback.negative and not feedback.positive


# ---- the learned model ---------------------------------------------------------------------------------------

BREWING = PreviousTurn("What efficiency should I plan my IPA for?")


def test_the_model_ships_and_reads_the_cues_it_was_trained_on() -> None:
    assert learned.model is not None
    assert learned.model.cue_names == CUE_NAMES
    assert len(learned.cues(BREWING, "thanks!")) == len(CUE_NAMES)


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("I prefer using Irish moss rather than whirlfloc.", T.NEW_STATEMENT),
        ("no way!", T.EXCLAMATION),
        ("Show me that revenue broken down by product", T.FOLLOW_UP_REFINEMENT),
        ("Thanks, that worked!", T.EXPLICIT_POSITIVE),
        ("That's wrong, it's 75%.", T.FOLLOW_UP_CORRECTION),
        ("That changed since last year", T.OUTDATED),
        ("This is useless.", T.EXPLICIT_NEGATIVE),
    ],
)
def test_the_model_reads_the_issue_follow_ups(message: str, kind: FeedbackType) -> None:
    feedback = learned.analyze(BREWING, message, gap_seconds=60)
    assert (feedback.type, feedback.source) == (kind, "model")
    assert feedback.probability is not None and 0 < feedback.probability <= 1


def test_a_weak_negative_reading_is_unclear_not_the_runner_up() -> None:
    model = learned.model
    assert model is not None
    p = np.full(len(LABELS), 0.01)
    p[LABELS.index("failure")] = 0.5
    p[LABELS.index("refinement")] = 0.4
    thresholds = np.zeros(len(LABELS))
    thresholds[LABELS.index("failure")] = 0.8
    assert decide(p, thresholds) == ("unclear", 0.5)
    thresholds[LABELS.index("failure")] = 0.4
    assert decide(p, thresholds)[0] == "failure"


def test_meta_and_repetition_speak_before_the_model() -> None:
    assert learned.analyze(PREVIOUS, "This is useless.", meta={"validation_passed": True}).source == "meta"
    assert learned.analyze(PREVIOUS, PREVIOUS.text, gap_seconds=90).type is T.REPEATED_QUESTION
    assert learned.analyze(PREVIOUS, "Which hops suit a pilsner?", gap_seconds=3 * 3600).type is T.NO_REPLY
