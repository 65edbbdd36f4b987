"""An acronym and its words spelled out are one term for dedupe's word comparison."""

from __future__ import annotations

import pytest

from learnloop.capture.acronyms import acronyms_aligned


@pytest.mark.parametrize(
    ("first", "second", "expected_second"),
    [
        ("Invoices go to the CFO.", "Invoices go to the Chief Financial Officer.", "Invoices go to the CFO."),
        (
            "The user works at the WHO.",
            "The user works at the World Health Organization.",
            "The user works at the WHO.",
        ),
        # Function words inside the run are skipped.
        ("Renew at the DMV.", "Renew at the Department of Motor Vehicles.", "Renew at the DMV."),
        # Lower case spells an acronym only from three letters on.
        (
            "The API is rate limited.",
            "The application programming interface is rate limited.",
            "The API is rate limited.",
        ),
    ],
)
def test_a_spelled_out_run_is_written_as_the_acronym(first: str, second: str, expected_second: str) -> None:
    assert acronyms_aligned(first, second) == (first, expected_second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The US store converts at 2.8%.", "The UK store converts at 2.8%."),  # another acronym spells nothing
        ("The IT team handles laptops.", "Laptops go in the trolley."),  # two lower-case words are chance
        ("The user lives in NYC.", "The user lives in Nairobi, Kenya."),
    ],
)
def test_runs_that_only_look_like_an_acronym_are_left_alone(first: str, second: str) -> None:
    assert acronyms_aligned(first, second) == (first, second)
