"""The profile's intent read by the configured chat model (`ProfileConfig(llm=True)`), kept to the vocabulary's
names; the rules answer for what it leaves out, and when it fails. The model is the scripted loopback server."""

from __future__ import annotations

from collections.abc import Callable

import learnloop
from learnloop.llms import resolve_llm
from learnloop.profile import ProfileConfig
from tests.support.scripted_openai import Reply, ScriptedOpenAI


async def test_the_model_reads_intent_within_the_vocabulary(
    open_loop: Callable[..., learnloop.Loop], scripted_openai: ScriptedOpenAI
) -> None:
    loop = open_loop("llm.db", llm=resolve_llm("openai:gpt-test", scripted_openai.settings()))
    loop.profiles.configure(ProfileConfig(llm=True))
    try:
        scripted_openai.chat.reply(
            Reply.json({"query_type": "customers", "metrics": ["revenue", "vibes"], "time_range": "soon"})
        )
        read = await loop.profiles.analyse("who spent the most with us in the last 7 days?")
        # "vibes" and "soon" are not the vocabulary's: dropped, and the rules' time range stands in.
        assert (read.coarse, read.metrics, read.time_range) == ("customers", ("revenue",), "last_7_days")
        assert read.fine == "customers_ranking_revenue_last_7_days"
        prompt = scripted_openai.chat_requests[0]["messages"][0]["content"]
        assert '"revenue"' in prompt and '"last_month"' in prompt
        # A model that fails leaves the rules' reading.
        scripted_openai.chat.reply(Reply.json(["not", "an", "object"]))
        assert (await loop.profiles.analyse("orders yesterday")).coarse == "orders"
    finally:
        await loop.aclose()
