"""Each turn's outcomes as the report reads them from real turns: tools right first try, corrections, the
verdict, turns to resolution, and the user's turn number."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import learnloop
from learnloop.holdback.outcomes import turn_outcomes

TOP = {"resource": "products", "limit": 10}


async def test_outcomes_of_real_turns(held_loop: learnloop.Loop, advance: Callable[[timedelta], None]) -> None:
    loop = held_loop
    await loop.holdback.configure(share=0.5)
    arms = {"ann": "memory", "amy": "memory", "hal": "holdback", "hugo": "holdback"}
    for user, arm in arms.items():
        await loop.holdback.pin(user, arm)
    for user, arm in arms.items():
        async with loop.turn(user, "Top products this month?", session="s1") as turn:
            if arm == "holdback":
                await turn.tool_call("shop_analytics", TOP, error="unknown field 'limit'")
            await turn.tool_call("shop_analytics", TOP, result={"rows": 10})
            await turn.finish("Here are your top products.")
        await loop.turns.drain()
        advance(timedelta(minutes=1))
        follow_up = "Perfect, thanks!" if arm == "memory" else "No, that's wrong: I asked for this month, not last."
        async with loop.turn(user, follow_up, session="s1") as turn:
            await turn.finish("Glad to help." if arm == "memory" else "Sorry, this month then.")
        await loop.turns.drain()
        advance(timedelta(minutes=1))
    rows = await loop.engine.holdback.armed_turns(loop.tenant, None, 100)  # type: ignore[union-attr]
    found = {(o.user, o.user_turn): o for o in turn_outcomes(rows)}
    first, second = found[("ann", 1)], found[("ann", 2)]
    assert (first.arm, first.tool_first_try, first.feedback, first.correction) == ("memory", 1.0, 0.8, 0.0)
    assert first.turns_to_resolution == 1.0 and second.tool_first_try is None and second.feedback is None
    held = found[("hal", 1)]
    assert (held.arm, held.tool_first_try, held.correction) == ("holdback", 0.0, 1.0)
    assert held.turns_to_resolution is None  # never thanked: the session is unresolved
    report = await loop.holdback.report()
    tools = next(o for o in report.experiments[0].outcomes if o.outcome == "tool_first_try")
    assert (tools.memory, tools.holdback, tools.difference) == (1.0, 0.0, 1.0)
    assert tools.samples == {"memory": 2, "holdback": 2} and tools.users == {"memory": 2, "holdback": 2}


async def test_a_report_of_one_namespace_counts_its_turns_only(
    held_loop: learnloop.Loop, advance: Callable[[timedelta], None]
) -> None:
    loop = held_loop
    await loop.holdback.configure(share=0.5)
    await loop.holdback.pin("ann", "memory")
    for namespace in ("learning", "support", "support"):
        async with loop.turn("ann", f"A question about {namespace}?", session="s1", namespace=namespace) as turn:
            await turn.finish("An answer.")
        await loop.turns.drain()
        advance(timedelta(minutes=1))
    rows = await loop.engine.holdback.armed_turns(loop.tenant, None, 100)  # type: ignore[union-attr]
    assert [row.namespace for row in rows] == ["learning", "support", "support"]
    assert [o.user_turn for o in turn_outcomes(rows, "support")] == [2, 3]  # numbered among all the user's turns
    whole, support = await loop.holdback.report(), await loop.holdback.report(namespace="support")
    assert whole.experiments[0].turns["memory"] == 3 and support.experiments[0].turns["memory"] == 2
