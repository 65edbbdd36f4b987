"""Fixtures of the profile tests: a loop on a real file with a settable clock, turns without the learning agent."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

import learnloop
from learnloop.turns import TurnConfig
from tests.support.clock import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def profile_loop(open_loop: Callable[..., learnloop.Loop], clock: Clock) -> AsyncIterator[learnloop.Loop]:
    loop = open_loop("profile.db", clock=clock)
    loop.turns.configure(TurnConfig(agent=False))
    yield loop
    await loop.aclose()
