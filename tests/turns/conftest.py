"""Fixtures of the turn tests: a loop on a real file with a settable clock and the tool catalog registered."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

import learnloop
from learnloop.turns import TurnConfig
from tests.support.clock import Clock
from tests.tools.conftest import CATALOG


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def turns_loop(open_loop: Callable[..., learnloop.Loop], clock: Clock) -> AsyncIterator[learnloop.Loop]:
    loop = open_loop("turns.db", clock=clock)
    loop.tools.configure(insight_every=0)
    await loop.tools.register(CATALOG)
    # The learning agent queues packages here; its workers would run in another process.
    loop.agent.configure(run_workers=False)
    loop.turns.configure(TurnConfig(agent=True))
    yield loop
    await loop.tools.drain()
    await loop.aclose()
