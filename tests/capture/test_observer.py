"""The rule observer on its corpora: teaching moments become the right artifact, everything else yields nothing.

Corpora (JSON lines under `corpora/`):
- `observer_teaching.jsonl`: turns with a teaching moment, the expected type, numbers that must survive
  verbatim and words the statement must contain (brewing, analytics, coding).
- `observer_nothing.jsonl`: greetings, thanks, questions, requests, chatter, and turns where the only
  statement is learnloop's own recalled context — all must yield nothing.
- `observer_heldout.jsonl`: both kinds, written after the rules were tuned on the first two; measured
  against a floor rather than required turn by turn.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from learnloop.capture.artifacts import Artifact, ObserveContext, is_recalled, strip_recalled_block
from learnloop.capture.observer import RuleObserver, category_hint
from learnloop.capture.turn import Draft, Rule, TurnView
from learnloop.models import LearningType

CORPORA = Path(__file__).parent / "corpora"
BREWING = ("equipment", "technique", "recipe", "ingredient", "correction")
FIRST_PERSON = re.compile(r"\b(?:I|me|my|mine|we|our|ours|us)\b|\bI'(?:m|ve|d|ll)\b")


def load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (CORPORA / name).read_text("utf-8").splitlines() if line.strip()]


TEACHING = load("observer_teaching.jsonl")
NOTHING = load("observer_nothing.jsonl")
HELDOUT = load("observer_heldout.jsonl")
observer = RuleObserver()


def extract(row: dict[str, Any], **context: Any) -> list[Artifact]:
    ctx = ObserveContext(recalled=row.get("recalled", []), **context)
    return observer.extract(row["user"], row["assistant"], context=ctx)


def matches(row: dict[str, Any], artifact: Artifact) -> bool:
    return (
        artifact.type.value == row["type"]
        and all(number in artifact.text for number in row["numbers"])
        and all(word.casefold() in artifact.text.casefold() for word in row["contains"])
    )


def test_corpora_are_big_enough_and_cover_three_domains() -> None:
    assert len(TEACHING) >= 60
    assert len(NOTHING) >= 60
    assert {row["domain"] for row in TEACHING} == {"brewing", "analytics", "coding"}
    assert {row["type"] for row in TEACHING} == {"correction", "fact", "preference", "procedure"}


@pytest.mark.parametrize("row", TEACHING, ids=[row["user"][:50] for row in TEACHING])
def test_teaching_moment_yields_the_expected_artifact(row: dict[str, Any]) -> None:
    artifacts = extract(row)
    assert any(matches(row, a) for a in artifacts), [(a.type.value, a.text) for a in artifacts]
    for artifact in artifacts:
        # A reusable statement about the user, not a transcript: no first person left, evidence from the user.
        assert not FIRST_PERSON.search(artifact.text), artifact.text
        assert artifact.evidence and len(artifact.evidence) <= 200
        assert artifact.evidence.rstrip("…") in " ".join(row["user"].split())
        assert artifact.rule and artifact.topic
        assert 0.0 < artifact.confidence <= 1.0


@pytest.mark.parametrize("row", NOTHING, ids=[row["user"][:50] for row in NOTHING])
def test_no_learning_turn_yields_nothing(row: dict[str, Any]) -> None:
    assert extract(row) == []


def test_heldout_corpus_precision_and_recall_floor() -> None:
    teaching = [row for row in HELDOUT if "type" in row]
    nothing = [row for row in HELDOUT if "type" not in row]
    found = sum(any(matches(row, a) for a in extract(row)) for row in teaching)
    false_alarms = [row["user"] for row in nothing if extract(row)]
    assert len(teaching) >= 30 and len(nothing) >= 30
    assert false_alarms == []
    assert found / len(teaching) >= 0.8


# ---- recalled context is never extracted again ------------------------------------------------------------


RECALLED = "User prefers mashing at 66 C"


@pytest.mark.parametrize(
    "user",
    [
        "I prefer mashing at 66 C.",
        "Yes, I prefer mash at 66 C, as you said.",
        "<learning_memories>\n- [verified/preference] I prefer mashing at 66 C\n</learning_memories>\nok",
        "<learning_memories>\n- [verified/preference] I prefer mashing at 66 C\n",  # cut off, never closed
    ],
)
def test_recalled_text_is_not_extracted_again(user: str) -> None:
    assert observer.extract(user, "", context=ObserveContext(recalled=[RECALLED])) == []


def test_assistant_repeating_recalled_facts_yields_nothing() -> None:
    assistant = "<learning_memories>\n- We use a Grainfather G30\n</learning_memories>\nYou use a Grainfather G30."
    assert (
        observer.extract("Great, thanks!", assistant, context=ObserveContext(recalled=["We use a Grainfather G30"]))
        == []
    )


def test_a_changed_number_is_new_information_not_an_echo() -> None:
    artifacts = observer.extract("I prefer mash at 68 C.", "", context=ObserveContext(recalled=[RECALLED]))
    assert [a.text for a in artifacts] == ["User prefers mashing at 68 C"]


def test_a_flipped_polarity_is_new_information_not_an_echo() -> None:
    recalled = ["User likes hazy IPAs"]
    artifacts = observer.extract("I don't like hazy IPAs.", "", context=ObserveContext(recalled=recalled))
    assert [a.text for a in artifacts] == ["User dislikes hazy IPAs"]


def test_is_recalled_and_block_stripping() -> None:
    assert is_recalled("User's kettle is a 30 L Grainfather G30", ["Kettle is a 30 L Grainfather G30"])
    assert not is_recalled("User's kettle is a 40 L Grainfather G30", ["Kettle is a 30 L Grainfather G30"])
    assert not is_recalled("User uses dbt", ["User's API returns timestamps in UTC"])
    assert not is_recalled("anything", [])
    text = "before <learning_memories>\n- a\n- b\n</learning_memories> after"
    assert strip_recalled_block(text).split() == ["before", "after"]
    assert strip_recalled_block("no block here") == "no block here"


# ---- behaviour ---------------------------------------------------------------------------------------------


def test_statements_are_rewritten_to_third_person_with_numbers_kept() -> None:
    cases = {
        "I prefer mash at 66 C": "User prefers mashing at 66 C",
        "we use Grainfather Gen 1": "User uses Grainfather Gen 1",
        "I've got a 30 L kettle": "User has got a 30 L kettle",
        "Our API returns timestamps in UTC": "User's API returns timestamps in UTC",
    }
    for user, expected in cases.items():
        assert [a.text for a in observer.extract(user, "")] == [expected]


def test_correction_names_what_it_corrects_from_the_assistant_message() -> None:
    (artifact,) = observer.extract("No, it's 3.5 L/hr.", "With a typical boil-off rate of 4 L/hr, start with 32 L.")
    assert artifact.type is LearningType.CORRECTION
    assert artifact.text == "Boil-off rate is 3.5 L/hr, not 4 L/hr"
    assert observer.extract("No, it's 3.5 L/hr.", "Start with 32 L.") == []  # nothing to say what "it" is


def test_assistant_only_content_yields_nothing() -> None:
    assistant = "Noted: you use a Grainfather G30 and prefer mashing at 66 C. The fix was adding gypsum."
    assert observer.extract("ok", assistant) == []
    assert observer.extract("", assistant) == []


def test_category_hints_come_from_the_vocabulary_only() -> None:
    context = ObserveContext(vocabulary_categories=BREWING)
    (correction,) = observer.extract("No, I meant the Belgian yeast, not the English one.", "", context=context)
    assert correction.category == "correction"
    (too_bitter,) = observer.extract("That recipe was too bitter.", "", context=context)
    assert too_bitter.category == "recipe"
    assert category_hint(LearningType.FACT, "User's kettle is a 30 L Anvil", ObserveContext()) is None
    described = ObserveContext(vocabulary_categories=["gear", "taste"], category_descriptions={"gear": "kettle, pumps"})
    assert category_hint(LearningType.FACT, "User's kettle is a 30 L Anvil Foundry", described) is None  # one word
    assert category_hint(LearningType.FACT, "User's kettle and pumps are 30 L rated", described) == "gear"


def test_apps_add_their_own_rules() -> None:
    def render(match: Any, turn: TurnView) -> Draft | None:
        return Draft(f"The {match.group('service')} service has an SLA of {match.group('sla')}", topic="sla")

    pattern = re.compile(r"\bthe (?P<service>\w+) SLA is (?P<sla>\d+(?:\.\d+)?%)", re.IGNORECASE)
    rule = Rule("ops.sla", LearningType.FACT, pattern, render, ("sla",))
    message = "The checkout SLA is 99.9%."
    (artifact,) = observer.with_rules(rule).extract(message, "")
    assert (artifact.text, artifact.rule, artifact.topic) == (
        "The checkout service has an SLA of 99.9%",
        "ops.sla",
        "sla",
    )
    assert observer.extract(message, "") == []


def test_artifacts_per_turn_are_capped_and_deduplicated() -> None:
    message = ". ".join(f"I prefer style number {n}" for n in range(10)) + ". I prefer style number 1."
    assert len(RuleObserver(max_artifacts=3).extract(message, "")) == 3
    texts = [a.text for a in observer.extract("I prefer pytest. I prefer pytest.", "")]
    assert texts == ["User prefers pytest"]


def test_artifact_evidence_is_clipped() -> None:
    artifact = Artifact(text="User prefers pytest", type=LearningType.PREFERENCE, rule="r", evidence="x " * 300)
    assert len(artifact.evidence) <= 200


def test_teaching_artifacts_pass_the_write_gate() -> None:
    from learnloop.capture.gate import WriteGate

    gate = WriteGate()
    refused = {
        a.text: gate.check(a.text).rule
        for row in TEACHING + [r for r in HELDOUT if "type" in r]
        for a in extract(row)
        if not gate.check(a.text).allowed
    }
    # Seed 001 §8.7's own example ("User meant last month, not last week") is stored: dated, not unstable.
    assert refused == {}
