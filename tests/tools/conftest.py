"""Fixtures of the tool-layer tests: a loop with a settable clock, and a small tool catalog."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

import learnloop
from tests.support.clock import Clock

CATALOG = [
    {"name": "get_forecast", "description": "Weather forecast for a city for the next days: rain, wind, temperature"},
    {"name": "air_quality", "description": "Air quality index and pollen levels for a zip code"},
    {
        "name": "shop_analytics",
        "description": "Analytics over store products, orders and customers with sort keys",
        # Declared values are the API's vocabulary: shared templates keep them (lowercase or not).
        "input_schema": {
            "type": "object",
            "properties": {
                "resource": {"type": "string", "enum": ["products", "orders", "customers"]},
                "sort_key": {"type": "string"},
                "limit": {"type": "integer"},
            },
        },
    },
    {"name": "refund_order", "description": "Refund a customer's order by id"},
    {"name": "translate_text", "description": "Translate text between languages"},
    {"name": "currency_convert", "description": "Convert an amount between currencies at today's rate"},
    {"name": "calendar_events", "description": "List the events in the user's calendar"},
    {"name": "send_email", "description": "Send an email message to a recipient"},
]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def tools_loop(open_loop: Callable[..., learnloop.Loop], clock: Clock) -> AsyncIterator[learnloop.Loop]:
    """A loop on a real SQLite file and the real local embedder, with the catalog registered."""
    loop = open_loop("tools.db", clock=clock)
    loop.tools.configure(insight_every=0)
    await loop.tools.register(CATALOG)
    yield loop
    await loop.tools.drain()
    await loop.aclose()
