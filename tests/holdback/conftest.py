"""Fixtures of the holdback tests: a loop on a real file with a settable clock, turns' work run in the test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import timedelta

import pytest

import learnloop
from learnloop.turns import TurnConfig
from tests.support.clock import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def advance(clock: Clock) -> Callable[[timedelta], None]:
    def move(delta: timedelta) -> None:
        clock.now += delta

    return move


@pytest.fixture
async def held_loop(open_loop: Callable[..., learnloop.Loop], clock: Clock) -> AsyncIterator[learnloop.Loop]:
    loop = open_loop("holdback.db", clock=clock)
    loop.agent.configure(run_workers=False)
    loop.turns.configure(TurnConfig(agent=False))
    yield loop
    await loop.aclose()
