"""Words that confirm an answer worked, defer trying it, or take a confirmation back."""

from __future__ import annotations

import pytest

from learnloop.capture.worked import deferred, taken_back, worked


@pytest.mark.parametrize(
    "message",
    [
        "That worked, thanks!",
        "ok that did the trick, crystal clear. next question: how long does it keep?",
        "removing the secondary DNS did it, 14 clients showing now",
        "curl -I shows the 301 now, all good",
        "Das hat funktioniert, danke",
        "¡Funcionó!",
    ],
)
def test_confirmations(message: str) -> None:
    assert worked(message)


@pytest.mark.parametrize(
    "message",
    ["it didn't work", "did it work?", "worked until I rebooted", "Nope, still not working", "I hope that works"],
)
def test_not_confirmations(message: str) -> None:
    assert not worked(message)


def test_deferrals_and_retractions() -> None:
    assert deferred("thanks, I'll give it a go tomorrow") and deferred("Vale, lo intento luego.")
    assert not deferred("That worked, thanks!")
    assert taken_back("actually scratch that — it's wobbling worse than before")
    assert not taken_back("omg it came back together, thank you")
