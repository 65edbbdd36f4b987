"""What happens after `turn.finish()`: the rest of seed 001 §7, once per turn, in the background.

Steps, in order, each recorded on the turn when it completes so that work resumed after a crash skips it:

0. `profile` — the message counted into the user's profile (seed 001 §6.1, §7 step 5a); its coarse intent is
   the intent the tool layer files this turn's templates and statistics under (unless the tool layer has its
   own intent classifier);
1. `signals` — the tool layer's window for the turn (the tools it was shown) and each tool call it reported:
   usage signals, templates, recovery patterns (seed 002, seed 001 §4.1–4.2); a call reported twice (the same
   call id, or the same tool, arguments and outcome) counts once (seed 001 §8.6);
2. `observe` — the verdict on the session's previous turn from this message, and what this turn taught
   (`capture.observe`); the verdict is also written on the previous turn's conversation record;
3. `agent` — the interaction package for the learning agent when one is configured (seed 003); the turn id is
   the package id, so a repeated step queues nothing twice;
4. `log` — the structured log events of seed 001 §11 (`template_hit`, `template_miss`, `recovery_applied`,
   `feedback_recorded`), once per turn, and the template counters its metrics read.

The observe step is safe to repeat on its own: it replays the turn at the time it began, so the turn log
sees the same message at the same moment again and counts it as a duplicate.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..agent import AgentService
from ..agent.registry import runtime_of
from ..capture.observe import ObserveResult, ShownLearning, observe
from ..models import DEFAULT_NAMESPACE
from ..profile import ProfileService
from ..profile.rules import OTHER
from ..stores.conversations import ConversationStore, ConversationTurn, distinct_calls
from ..tools.intelligence import tools_of
from ..tools.models import QueryTemplate
from .config import TurnConfig

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = [
    "STEPS",
    "TEMPLATE_CONFIDENCE_MILLI",
    "TEMPLATE_HITS",
    "TEMPLATE_MISSES",
    "agent_wanted",
    "record_signals",
    "run_turn_work",
]

log = logging.getLogger("learnloop.turns")

# Write counters (hourly, per tenant) the §11 metrics read: template hits over time and their confidence.
TEMPLATE_HITS = "template.hit"
TEMPLATE_MISSES = "template.miss"
TEMPLATE_CONFIDENCE_MILLI = "template.hit_confidence_milli"  # the sum of the hit templates' confidence x 1000

STEPS = ("profile", "signals", "observe", "agent", "log")


def agent_wanted(engine: Engine, config: TurnConfig) -> bool:
    if config.agent is not None:
        return config.agent
    runtime = runtime_of(engine)
    assert runtime is not None
    return runtime.model is not None or not runtime.config.run_workers


async def run_turn_work(engine: Engine, store: ConversationStore, turn: ConversationTurn, config: TurnConfig) -> None:
    """Run the steps `turn` has not done yet (it is claimed by the caller)."""
    done = dict(turn.steps)
    for step in STEPS:
        if step in done:
            continue
        if step == "profile":
            result: Any = await _profile(engine, turn)
        elif step == "signals":
            result = await record_signals(engine, turn, intent=(done.get("profile") or {}).get("intent"))
        elif step == "observe":
            result = await _observe(engine, store, turn)
        elif step == "agent":
            result = await _agent(engine, turn, config)
        else:
            result = _log(engine, turn, done)
        await store.commit_step(turn, step, result)
        done[step] = result


async def _profile(engine: Engine, turn: ConversationTurn) -> dict[str, Any]:
    if turn.user is None or engine.profiles is None:
        return {"intent": None}
    namespace = str(turn.context.get("namespace") or DEFAULT_NAMESPACE)
    analysis = await ProfileService(engine, turn.tenant).learn(
        turn.user, turn.message, namespace=namespace, at=turn.started_at
    )
    # "other" (not a question the vocabulary knows) files nothing under an intent.
    intent = None if analysis.coarse == OTHER else analysis.coarse
    return {"intent": intent, "fine": analysis.fine, "complexity": analysis.complexity}


async def record_signals(engine: Engine, turn: ConversationTurn, *, intent: str | None = None) -> dict[str, Any]:
    """The turn's tool signals: the window with the tools it was shown, then each call in order."""
    routed: list[str] = list(turn.context.get("routed", []))
    if engine.tools is None or not (routed or turn.tool_calls):
        return {"calls": 0, "templates": []}
    tools = tools_of(engine, turn.tenant)
    if tools.config.intent_classifier is not None:
        intent = None  # the tool layer's own classifier decides
    await tools.open_window(turn.session, turn.message, routed, user=turn.user, intent=intent)
    templates: list[int] = []
    hits: list[dict[str, Any]] = []
    misses: list[dict[str, Any]] = []
    recoveries: list[dict[str, Any]] = []
    calls = distinct_calls(turn.tool_calls)
    for call in calls:
        receipt = await tools.record_call(
            turn.session,
            call["name"],
            call.get("arguments") or {},
            ok=call.get("error") is None,
            error=call.get("error"),
            latency_ms=call.get("ms"),
            user=turn.user,
        )
        if receipt.template_id is not None:
            templates.append(receipt.template_id)
            template = await _template(engine, turn, call["name"], receipt.template_id)
            # Seed 001 §4.1: a successful call whose template existed is a hit; one that created it, a miss.
            if template is not None and (template.origin == "seed" or template.successes > 1):
                hits.append({"id": template.id, "intent": template.intent, "confidence": template.confidence})
            elif template is not None:
                misses.append({"id": template.id, "intent": template.intent})
        recovery = receipt.recovery
        if recovery is not None and recovery.times_applied > 1:  # a known recovery worked again
            recoveries.append({"id": recovery.id, "error_type": recovery.error_type, "tool": recovery.failed_tool})
    return {
        "calls": len(calls),
        "templates": templates,
        "hits": hits,
        "misses": misses,
        "recoveries": recoveries,
    }


async def _template(engine: Engine, turn: ConversationTurn, tool: str, template_id: int) -> QueryTemplate | None:
    store = engine.tools
    assert store is not None
    found = await store.templates(turn.scope, engine.clock(), tool=tool, include_archived=True)
    return next((t for t in found if t.id == template_id), None)


async def _observe(engine: Engine, store: ConversationStore, turn: ConversationTurn) -> dict[str, Any]:
    shown_rows: list[dict[str, Any]] = list(turn.context.get("shown", []))
    learnings = {
        learning.id: learning for learning in await engine.store.get_many(turn.scope, [r["id"] for r in shown_rows])
    }
    shown = [
        ShownLearning(row["id"], learnings[row["id"]].text, bool(row.get("used", True)))
        for row in shown_rows
        if row["id"] in learnings
    ]
    result: ObserveResult = await observe(
        engine,
        turn.scope,
        turn.message,
        turn.response or "",
        session=turn.session,
        retrieved=shown,
        meta=turn.meta,
        namespace=str(turn.context.get("namespace") or DEFAULT_NAMESPACE),
        at=turn.started_at,
        tags=list(turn.context.get("tags", [])),
        refused=bool(turn.context.get("refused")),
        channel=turn.channel,
    )
    feedback = result.feedback
    if feedback is not None:
        previous = await store.previous_turn(turn.scope, turn.session, turn.started_at)
        if previous is not None:
            await store.record_feedback(turn.scope, previous.id, feedback.type, feedback.score)
    return {
        "turn": result.turn,
        "duplicate": result.duplicate,
        "saved": [r.learning.id for r in result.stored if r.learning is not None],
        "feedback": None if feedback is None else {"type": feedback.type, "score": feedback.score},
    }


async def _agent(engine: Engine, turn: ConversationTurn, config: TurnConfig) -> dict[str, Any]:
    if not agent_wanted(engine, config):
        return {"package": None}
    service = AgentService(engine, turn.tenant)
    queued = await service.submit_interaction(
        turn.session,
        turn.message,
        turn.response or "",
        user=turn.user,
        items_retrieved=[{"id": row["id"]} for row in turn.context.get("shown", [])],
        experience_read=list(turn.context.get("experience", [])),
        tool_calls=[
            {
                "name": call["name"],
                "arguments": call.get("arguments") or {},
                "ok": call.get("error") is None,
                "error": call.get("error"),
                "result": call.get("result"),
                "latency_ms": call.get("ms"),
            }
            for call in turn.tool_calls
        ],
        id=f"turn-{turn.id}",
        at=turn.started_at,
        meta=turn.meta,
    )
    return {"package": queued.package_id, "duplicate": queued.duplicate}


def _log(engine: Engine, turn: ConversationTurn, done: dict[str, Any]) -> dict[str, Any]:
    """Seed 001 §11's structured events, once per turn (the step is recorded with the count), and the counters
    the metrics read for template hits over time."""
    signals = done.get("signals") or {}
    observed = done.get("observe") or {}
    base = {"tenant": turn.tenant, "turn_id": turn.id, "session": turn.session, "channel": turn.channel}
    hits = signals.get("hits", [])
    misses = signals.get("misses", [])
    recoveries = signals.get("recoveries", [])
    for hit in hits:
        extra = {"template_id": hit["id"], "intent": hit["intent"], "confidence": hit["confidence"]}
        log.info("template_hit", extra={"event": "template_hit", **base, **extra})
    for miss in misses:
        extra = {"template_id": miss["id"], "intent": miss["intent"], "reason": "no_match"}
        log.info("template_miss", extra={"event": "template_miss", **base, **extra})
    for recovery in recoveries:
        extra = {"pattern_id": recovery["id"], "error_type": recovery["error_type"]}
        log.info("recovery_applied", extra={"event": "recovery_applied", **base, **extra})
    feedback = observed.get("feedback")
    if feedback:
        log.info("feedback_recorded", extra={"event": "feedback_recorded", **base, **feedback})
    log.info(
        "turn_finished",
        extra={
            "event": "turn_finished",
            **base,
            "tool_calls": len(turn.tool_calls),
            "saved": len(observed.get("saved", [])),
        },
    )
    counters = engine.service
    if counters is not None and (hits or misses):
        at = turn.finished_at or turn.started_at
        counters.add_count(turn.tenant, TEMPLATE_HITS, at, len(hits))
        counters.add_count(turn.tenant, TEMPLATE_MISSES, at, len(misses))
        confidence = round(sum(h["confidence"] for h in hits) * 1000)
        counters.add_count(turn.tenant, TEMPLATE_CONFIDENCE_MILLI, at, confidence)
    return {"events": 1 + len(hits) + len(misses) + len(recoveries) + bool(feedback)}
