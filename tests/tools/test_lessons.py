"""Lessons under past errors (seed 001 §9 "Lesson: …"; §8.2: lessons work with no history)."""

from __future__ import annotations

from datetime import UTC, datetime

from learnloop.tools.base import ToolKnowledge
from learnloop.tools.config import ToolConfig
from learnloop.tools.context import ERRORS_TITLE, build_sections
from learnloop.tools.lessons import default_lesson, lesson_for
from learnloop.tools.models import Insight, RecoveryPattern, SignalKind, ToolSignal

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def failure(error: str, error_type: str, fingerprint: str = "fp") -> ToolSignal:
    return ToolSignal(
        id=1,
        tenant="t",
        user="alice",
        session="s",
        kind=SignalKind.CALL,
        tool="shopify_graphql",
        ok=False,
        error=error,
        error_type=error_type,
        fingerprint=fingerprint,
        at=NOW,
    )


def recovery(fingerprint: str) -> RecoveryPattern:
    return RecoveryPattern(
        id=1,
        tenant="t",
        user=None,
        fingerprint=fingerprint,
        error_type="invalid_argument",
        failed_tool="shopify_graphql",
        failed_params={},
        recovery_tool="shopify_graphql",
        recovery_params={},
        description="Changed sort_key from 'REVENUE' to 'BEST_SELLING'",
        times_applied=1,
        times_succeeded=1,
        confidence=1.0,
        effective_confidence=1.0,
        status="active",
        created_at=NOW,
        last_used_at=NOW,
    )


def test_every_past_error_has_a_lesson() -> None:
    knowledge = ToolKnowledge(failures=[failure("Field 'total_price' doesn't exist on Order", "invalid_argument")])
    [section] = build_sections(knowledge, ToolConfig(), NOW, relevant=None)
    assert section.title == ERRORS_TITLE
    assert section.lines == [
        "[shopify_graphql] invalid_argument: Field 'total_price' doesn't exist on Order Lesson: 'total_price' "
        "was rejected by shopify_graphql; use the names and values its schema declares"
    ]


def test_a_known_fix_then_known_values_then_the_rule() -> None:
    wrong = failure("Invalid sort key REVENUE", "invalid_argument", fingerprint="other")
    assert lesson_for(wrong, [recovery("fp")], []) == (
        "what worked before: Changed sort_key from 'REVENUE' to 'BEST_SELLING'"
    )
    values = Insight(
        type="parameter_values",
        key="shopify_graphql:sort_key",
        value={"tool": "shopify_graphql", "parameter": "sort_key", "valid": ["BEST_SELLING"], "invalid": ["REVENUE"]},
        sample_size=3,
        confidence=0.6,
        effective_confidence=0.6,
        updated_at=NOW,
    )
    assert lesson_for(wrong, [], [values]) == "valid sort_key values for shopify_graphql: BEST_SELLING"
    assert default_lesson(failure("timed out", "timeout")) == (
        "narrow the request to shopify_graphql (fewer items, a shorter period)"
    )
    assert "unchanged" in default_lesson(failure("boom", "error"))


def test_an_app_can_write_its_own_lessons() -> None:
    knowledge = ToolKnowledge(failures=[failure("boom", "error")])
    config = ToolConfig(lesson=lambda f: f"call {f.tool} with fewer fields")
    [section] = build_sections(knowledge, config, NOW, relevant=None)
    assert section.lines[0].endswith("Lesson: call shopify_graphql with fewer fields")
