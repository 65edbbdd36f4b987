"""The answer's procedure or snippet as one learning (seed 004's canonical artifact)."""

from __future__ import annotations

from learnloop.capture.answers import answer_artifact
from learnloop.models import LearningType


def test_numbered_steps_become_one_procedure_named_by_the_answers_intro() -> None:
    answer = "Here's how to reset the router:\n\n1. Hold the reset button for 10 s.\n2. Wait for the lights to blink."
    found = answer_artifact(answer, "my router is stuck")
    assert found is not None and found.type is LearningType.PROCEDURE
    assert found.text == (
        "To reset the router, steps that worked: 1. Hold the reset button for 10 s. 2. Wait for the lights to blink."
    )
    assert found.question == "my router is stuck"


def test_bullets_without_an_intro_are_named_by_the_question() -> None:
    found = answer_artifact("- Cold crash at 1 C for 48 h\n- Add gelatin finings", "How do I get a clearer beer?")
    assert found is not None and found.text.startswith("To get a clearer beer, steps that worked: 1. Cold crash")


def test_a_code_block_becomes_a_snippet_in_a_fence() -> None:
    answer = "Run:\n\n```bash\ndocker builder prune -af\n```\n"
    found = answer_artifact(answer, "stale docker layers")
    assert found is not None and found.type is LearningType.SNIPPET
    assert found.text.endswith("code that worked:\n```bash\ndocker builder prune -af\n```")


def test_prose_and_a_single_step_are_not_artifacts() -> None:
    assert answer_artifact("Sparging rinses the grain bed to extract the sugars.", "What is a sparge?") is None
    assert answer_artifact("Try this:\n\n1. Restart it.", "It hangs") is None


def test_long_procedures_are_condensed_to_the_size_limit() -> None:
    steps = "\n".join(
        f"{n}. Step number {n} does something long. " + "More detail follows here. " * 8 for n in range(1, 13)
    )
    found = answer_artifact(steps, "How do I do the long thing?")
    assert found is not None and len(found.text) <= 1000 and "1. Step number 1" in found.text
