"""Closing the tool layer before its store: background passes are drained, then the rest cancelled, so none
runs against a closed store (`close_tools`, which `Loop.aclose()` calls first)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

import learnloop
from learnloop.tools.intelligence import close_tools
from tests.tools.conftest import CATALOG, Clock

QUERY = "will it rain in Paris tomorrow?"


async def busy_loop(open_loop: Callable[..., learnloop.Loop], clock: Clock) -> learnloop.Loop:
    """A loop whose every recorded call starts a background aggregation, with two tenants at work."""
    loop = open_loop("close.db", clock=clock)
    for tools in (loop.tools, loop.for_tenant("globex").tools):
        tools.configure(insight_every=1)
        await tools.register(CATALOG)
        await tools.set_context("s1", QUERY, user="alice", intent="weather")
        for _ in range(3):
            await tools.record_call("s1", "get_forecast", {"city": "Paris"})
    return loop


async def test_close_drains_background_passes_of_every_tenant(
    open_loop: Callable[..., learnloop.Loop], clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    loop = await busy_loop(open_loop, clock)
    caplog.set_level(logging.ERROR, logger="learnloop.tools")
    await close_tools(loop.engine)
    await loop.aclose()
    assert not loop.tools._background and not loop.for_tenant("globex").tools._background
    assert "background tool-knowledge pass failed" not in caplog.text
    reopened = open_loop("close.db", clock=clock)
    try:  # the drained passes finished their work before the store closed
        assert await reopened.tools.insights(type="tool_preference")
        assert await reopened.for_tenant("globex").tools.insights(type="tool_preference")
    finally:
        await reopened.aclose()


async def test_close_cancels_what_the_grace_period_did_not_finish(
    open_loop: Callable[..., learnloop.Loop], clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    loop = await busy_loop(open_loop, clock)
    caplog.set_level(logging.ERROR, logger="learnloop.tools")
    await close_tools(loop.engine, grace=0)
    assert not loop.tools._background and not loop.for_tenant("globex").tools._background
    await loop.aclose()
    assert "background tool-knowledge pass failed" not in caplog.text
    # Nothing waits on a closed store: the tools are usable again on a loop opened anew.
    reopened = open_loop("close.db", clock=clock)
    try:
        await reopened.tools.set_context("s2", QUERY, user="alice")
        assert (await reopened.tools.record_call("s2", "get_forecast", {"city": "Paris"})).applied
    finally:
        await close_tools(reopened.engine)
        await reopened.aclose()
