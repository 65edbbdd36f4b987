"""Issue 17: restore, promote and confirm do what their names say, and nothing else."""

from __future__ import annotations

import pytest

import learnloop
from learnloop import Status


async def _saved(loop: learnloop.Loop, text: str, status: str) -> learnloop.Learning:
    result = await loop.save(text, user="alice", category="equipment", status=status)
    assert result.learning is not None
    return result.learning


async def test_restore_on_a_learning_that_is_not_deprecated_is_refused(loop: learnloop.Loop) -> None:
    verified = await _saved(loop, "Alice's kettle holds 30 litres of wort", "verified")
    with pytest.raises(learnloop.InvalidTransition, match="not deprecated"):
        await loop.restore(verified.id, user="alice")
    assert (await loop.get(verified.id)).status is Status.VERIFIED  # not demoted
    candidate = await _saved(loop, "Alice's mash tun loses 2 litres to dead space", "candidate")
    with pytest.raises(learnloop.InvalidTransition):
        await loop.restore(candidate.id, user="alice", status="verified")
    assert (await loop.get(candidate.id)).status is Status.CANDIDATE


async def test_restore_brings_a_deprecated_learning_back(loop: learnloop.Loop) -> None:
    learning = await _saved(loop, "Alice sparges at 76 degrees in her setup", "candidate")
    await loop.deprecate(learning.id, "wrong", user="alice")
    restored = await loop.restore(learning.id, user="alice", status="verified")
    assert restored.status is Status.VERIFIED
    assert [e.action for e in await loop.history(learning.id)][-1] == "restored"


async def test_promote_on_a_deprecated_learning_is_refused_not_labelled_restored(loop: learnloop.Loop) -> None:
    learning = await _saved(loop, "Alice's chiller cools 20 litres in 15 minutes", "candidate")
    await loop.deprecate(learning.id, "obsolete", user="alice")
    with pytest.raises(learnloop.InvalidTransition, match="restore it instead"):
        await loop.promote(learning.id, user="alice")
    assert "restored" not in [e.action for e in await loop.history(learning.id)]
    assert (await loop.get(learning.id)).status is Status.DEPRECATED


async def test_confirm_promotes_a_candidate_and_raises_a_verified_ones_confidence(loop: learnloop.Loop) -> None:
    candidate = await _saved(loop, "Alice's fermenter holds 23 litres to the brim", "candidate")
    confirmed = await loop.confirm(candidate.id, user="alice")
    assert confirmed.status is Status.VERIFIED and confirmed.confidence >= 0.9
    again = await loop.confirm(candidate.id, user="alice", reason="worked again")
    assert again.status is Status.VERIFIED and again.confidence > confirmed.confidence
    assert [e.action for e in await loop.history(candidate.id)][-2:] == ["promoted", "confirmed"]
    await loop.deprecate(candidate.id, "replaced", user="alice")
    with pytest.raises(learnloop.InvalidTransition):
        await loop.confirm(candidate.id, user="alice")
