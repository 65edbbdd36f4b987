"""Seed 001 §8.7: what the user meant, and what was misread, found by shape in the previous turn."""

from __future__ import annotations

from learnloop.capture.meant import Meant, meant


def test_a_time_range_for_a_time_range() -> None:
    assert meant("No, I meant last month", "Show me revenue for last week") == Meant("last month", "last week")


def test_both_sides_said() -> None:
    assert meant("No, I meant last month, not last week", "") == Meant("last month", "last week")
    assert meant("Nein, ich meinte die Rispenhortensien, nicht die Bauernhortensien.", "") == Meant(
        "die Rispenhortensien", "die Bauernhortensien"
    )


def test_the_same_head_noun_and_a_name_for_a_name() -> None:
    assert meant("I meant the production server", "Restart the staging server") == Meant(
        "the production server", "staging server"
    )
    assert meant("Sorry, I meant Berlin", "What is the weather in Paris tomorrow?") == Meant("Berlin", "Paris")


def test_not_this_but_that() -> None:
    assert meant("not the staging server, production. staging is fine", "") == Meant("production", "the staging server")
    assert meant("not bad, thanks", "") is None and meant("not yet, I will try tomorrow", "") is None


def test_nothing_of_the_same_shape_keeps_what_was_meant() -> None:
    found = meant("i meant orders", "show me the sales count")
    assert found is not None and found.text == "User meant orders"
