"""Attributes a person or a thing has one of at a time: where they live, whom they work for, their manager.

"El usuario vive en Valencia" / "El usuario vive en Bilbao": nothing says it changed, but nobody lives in two
cities as their one home, so the new text replaces the old one (the old stays in the version chain, and the
undo on the review page restores it). Without such an attribute two names are two things ("User plays the
cello" / "User plays the violin"), and dedupe keeps both.
"""

from __future__ import annotations

import re

from .evidence import GENERIC, names_swapped, profile

__all__ = ["single_value_replaced"]

# Each group is one attribute, however it is said: "manager is" and "reports to" name the same person.
_GROUPS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        (
            "home",
            r"\b(?:lives|living) (?:in|at)\b|\bresides in\b|\bhome is in\b|\bvive (?:en|a)\b|\breside en\b"
            r"|\bwohnt (?:jetzt )?(?:in|im)\b|\bhabite (?:à|a|en|au)\b|\babita (?:a|in)\b|\bmora (?:em|no|na)\b"
            r"|\bwoont (?:in|te)\b|\bmieszka w\b|\bbor i\b|\bживёт в\b|\bживет в\b|\btinggal di\b|\bsống ở\b",
        ),
        (
            "employer",
            r"\bworks (?:at|for)\b|\bemployed (?:at|by)\b|\btrabaja (?:en|para)\b|\barbeitet (?:bei|für)\b"
            r"|\btravaille (?:chez|pour)\b|\blavora (?:presso|per)\b|\btrabalha (?:na|no|em|para)\b|\bwerkt bij\b"
            r"|\bpracuje (?:w|dla)\b|\b(?:jobbar|arbetar) på\b|\bработает в\b|\bbekerja di\b",
        ),
        ("manager", r"\bmanager is\b|\breports to\b|\bboss is\b|\bline manager\b"),
        ("phone", r"\bphone is an?\b|\bphone is the\b"),
        ("dentist", r"\bdentist is\b|\bsees (?:dr\.?|a dentist)\b"),
        ("doctor", r"\b(?:gp|doctor|physician) is\b"),
        (
            "blood type",
            r"\bblood (?:type|group) is\b|\bgrupo sanguíneo es\b|\bblutgruppe ist\b|\bgroupe sanguin est\b"
            r"|\bgruppo sanguigno è\b|\btipo sanguíneo é\b|\bbloedgroep is\b|\bgrupa krwi\b|\bkan grubu\b",
        ),
        # A household's or a service's one supplier at a time: "broadband is with BT", "hosted on Netlify".
        (
            "supplier",
            r"\b(?:broadband|internet|electricity|energy|gas|mobile|phone) (?:is|are) (?:with|from|through)\b"
            r"|\b(?:broadband|internet|electricity|energy|gas|mobile) (?:provider|supplier|plan) is\b"
            r"|\b(?:mortgage|bank account|current account|insurance|pension) is with\b",
        ),
        ("host", r"\b(?:is|are) (?:hosted|deployed|running) (?:on|with|at)\b"),
        ("handled by", r"\b(?:is|are) (?:handled|managed|represented) by\b"),
        ("spouse", r"\b(?:is married to|is engaged to|'s (?:wife|husband|spouse) is)\b"),
    )
)


def single_value_replaced(new: str, old: str) -> str | None:
    """The attribute both texts give a value of, when it holds one value at a time, both say it of the same
    subject (the same names and relations before it) and each names a value the other does not ("Tom Baker" /
    "Sarah Lin", "Valencia" / "Bilbao"); else None. "Ana lives in Lisbon" / "Ben lives in Lisbon" are two people."""
    for name, pattern in _GROUPS:
        ours, theirs = pattern.search(new), pattern.search(old)
        if ours is None or theirs is None:
            continue
        if _whose(new[: ours.start()]) != _whose(old[: theirs.start()]):
            return None
        # Read mid-sentence, as it was written: a value that opens the rest ("is *A* positive") is still a name.
        added, gone = names_swapped(profile(f"it {new[ours.end() :]}"), profile(f"it {old[theirs.end() :]}"))
        return name if added and gone else None
    return None


def _whose(subject: str) -> frozenset[str]:
    """The words that say whose attribute it is: names, relations and the rest ("User's" and "User" are the same
    user; "the user's *skip-level* manager" is another manager)."""
    said = profile(subject)
    return frozenset(word for word in said.markers | said.content if word not in GENERIC)
