"""Issue 17: the README's sync example opened "brew.db" without the vocabulary the first example gave it, and its
`category="technique"` was refused. A vocabulary given to `open()` is now stored with the data."""

from __future__ import annotations

from pathlib import Path

import pytest

import learnloop
from tests.conftest import BREWING


def test_a_later_open_without_the_vocabulary_keeps_it(tmp_path: Path) -> None:
    db = str(tmp_path / "brew.db")
    with learnloop.open(db, vocabulary=BREWING).sync as loop:
        assert loop.save("Grainfather boil-off is 3.5 L/hr", user="alice", category="equipment").stored
    with learnloop.open(db).sync as loop:
        assert loop.save("Mash at 66 C for a drier finish", user="alice", category="technique").stored
        assert loop.vocabulary().names == list(BREWING)
        with pytest.raises(learnloop.InvalidCategory):
            loop.save("Alice prefers metric units", user="alice", category="preference")
        changes = [e for e in loop.events(limit=100) if e.action == "vocabulary_changed"]
        assert len(changes) == 1 and changes[0].actor == "system:open"
    # Opening again with the same vocabulary writes nothing new; a changed one replaces it.
    with learnloop.open(db, vocabulary=BREWING).sync as loop:
        assert len([e for e in loop.events(limit=100) if e.action == "vocabulary_changed"]) == 1
    with learnloop.open(db, vocabulary={"gear": "Kit"}).sync as loop:
        assert loop.vocabulary().names == ["gear"]
