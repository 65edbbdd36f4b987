"""The nothing-lost property's parts, shared by the save path's test and the merge of two users: related
statements to save, and the check that every text saved is live, or deprecated naming its successor and why, or
contained in a live learning's text, or kept among the sources of the live learning that already knew it."""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import strategies as st

from learnloop import Loop, Status

SUBJECTS = ["The user", "The user's partner", "Kettle A", "Kettle B", "Team Alpha", "The staging server", "Priya"]
FACTS = [
    "boils off {n} L/hr",
    "mashes at {n} °C",
    "runs {n} km every Sunday",
    "prefers {w} answers",
    "uses {w} for CI",
    "has {n} kids",
    "no longer uses {w} for CI",
    "actually boils off {n} L/hr",
    "switched from {w} to {v} for CI",
]
WORDS = ["Jenkins", "CircleCI", "short", "detailed", "GitHub Actions", "Vim"]

statement = st.builds(
    lambda s, f, n, w, v, tags: (f"{s} {f.format(n=n, w=w, v=v)}.", tags),
    st.sampled_from(SUBJECTS),
    st.sampled_from(FACTS),
    st.sampled_from(["3.5", "4", "66", "68", "2", "10", "0.92"]),
    st.sampled_from(WORDS),
    st.sampled_from(WORDS),
    st.sampled_from([[], [], ["staging"], ["production"]]),
)


async def assert_nothing_lost(loop: Loop, user: str, texts: Iterable[str], context: str = "") -> None:
    everything = (await loop.list(user=user, owner=user, limit=1000)).items
    live = [x for x in everything if x.status is not Status.DEPRECATED]
    by_id = {x.id: x for x in everything}
    wordings = {x.id: [p.text or "" for p in await loop.provenance(x.id, user=user)] for x in live}
    for text in texts:
        if any(text in x.text for x in live):
            continue
        if any(text in w for x in live for w in wordings[x.id]):
            continue  # skipped as already known: kept among that learning's sources
        gone = [x for x in everything if x.text == text]
        assert gone, f"{text!r} was lost{context}"
        for old in gone:
            assert old.status is Status.DEPRECATED and old.status_reason
            assert old.superseded_by in by_id, f"{text!r} deprecated without a successor"
