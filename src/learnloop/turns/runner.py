"""The background side of turns in one process: running finished turns' work, and housekeeping.

A finish wakes the runner of the process that took it; the work is claimed from the database under a lease,
so a turn finished by a process that died is picked up by the next housekeeping pass of any process (every
`housekeeping_seconds`, and at once when a runner starts). Housekeeping also abandons turns never finished
and gives silent turns their no-reply score (seed 001 §4.4), each once: the store moves every turn out of the
state it is decided in, in the transaction that decides it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from ..capture.feedback import FeedbackType
from ..channels.identities import finish_pending_merges
from ..stores.conversations import ConversationStore, ConversationTurn
from .config import TurnConfig
from .work import record_signals, run_turn_work

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = ["HousekeepingReport", "TurnRunner", "close_turn_runner", "turn_runner"]

log = logging.getLogger("learnloop.turns")

_REGISTRY = "_learnloop_turn_runner"
CLOSE_GRACE_S = 5.0


@dataclass
class HousekeepingReport:
    abandoned: list[str] = field(default_factory=list)
    silent: list[str] = field(default_factory=list)
    answered: int = 0
    processed: int = 0
    merges: int = 0


class TurnRunner:
    def __init__(self, engine: Engine, store: ConversationStore, config: TurnConfig) -> None:
        self._engine = engine
        self.store = store
        self.config = config
        self._claimer = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._draining: asyncio.Task[int] | None = None
        self._again = False
        self._lock = asyncio.Lock()
        self._periodic: asyncio.Task[None] | None = None
        self._closing = False

    # -- the work of finished turns ------------------------------------------------------------------

    def wake(self) -> None:
        """Run claimable work soon, in the background (a pass already running takes it on)."""
        if self._closing:
            return
        self._ensure_periodic()
        if self._lock.locked():
            self._again = True
            return
        self._draining = asyncio.get_running_loop().create_task(self._drain_all())

    async def drain(self) -> int:
        """Run every turn's work that is claimable now, and wait for it; returns how many turns this call ran."""
        return await self._drain_all()

    async def _drain_all(self) -> int:
        # One pass at a time in a process: a pass waits for the running one, then takes what is left.
        async with self._lock:
            done = 0
            while True:
                self._again = False
                while (turn := await self._claim()) is not None:
                    await self._work(turn)
                    done += 1
                if not self._again or self._closing:
                    if done:  # a turn that began before its person linked learned as the old user: move it now
                        await finish_pending_merges(self._engine)
                    return done

    async def _claim(self) -> ConversationTurn | None:
        return await self.store.claim_work(self._claimer, self._engine.clock(), self.config.lease_seconds)

    async def _work(self, turn: ConversationTurn) -> None:
        try:
            await run_turn_work(self._engine, self.store, turn, self.config)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the turn's work must never take the app down; it is retried
            log.exception("work of turn %s failed (attempt %d)", turn.id, turn.attempts + 1)
            if turn.attempts + 1 >= self.config.max_attempts:
                await self.store.commit_step(turn, "failed", f"{type(exc).__name__}: {exc}"[:500])
                await self.store.complete_work(turn)
                return
            wait = self.config.retry_backoff * 2**turn.attempts
            await self.store.fail_work(
                turn, f"{type(exc).__name__}: {exc}", self._engine.clock() + timedelta(seconds=wait)
            )
            return
        await self.store.complete_work(turn)

    # -- housekeeping --------------------------------------------------------------------------------

    async def housekeeping(self, now: datetime | None = None) -> HousekeepingReport:
        """Abandon expired turns, score silent ones, and run work left behind. `now` for tests and replays."""
        now = now or self._engine.clock()
        report = HousekeepingReport()
        for turn in await self.store.expire_turns(now):
            report.abandoned.append(turn.id)
            if turn.tool_calls:  # the calls happened even if the answer never came: the tool layer learns
                await record_signals(self._engine, turn)
            where = {"tenant": turn.tenant, "turn_id": turn.id, "channel": turn.channel}
            log.info("turn_abandoned", extra={"event": "turn_abandoned", **where})
        kind = FeedbackType.NO_REPLY.value
        verdict = await self.store.settle_silence(now, self.config.silence_seconds, kind, self.config.silence_score)
        report.answered = verdict.answered
        tools = self._engine.tools
        for turn in verdict.silent:
            report.silent.append(turn.id)
            templates = (turn.steps.get("signals") or {}).get("templates") or []
            if tools is not None and templates:  # seed 001 §7 step 3: the verdict moves the templates used
                await tools.template_feedback(turn.scope, sorted(set(templates)), self.config.silence_score, now)
            log.info(
                "feedback_recorded",
                extra={
                    "event": "feedback_recorded",
                    "tenant": turn.tenant,
                    "turn_id": turn.id,
                    "channel": turn.channel,
                    "type": kind,
                },
            )
        report.processed = await self.drain()
        report.merges = await finish_pending_merges(self._engine)  # links cut short, or waiting for a turn
        return report

    def _ensure_periodic(self) -> None:
        if self._periodic is None or self._periodic.done():
            self._periodic = asyncio.get_running_loop().create_task(self._every())

    async def _every(self) -> None:
        while not self._closing:
            try:
                await self.housekeeping()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("turn housekeeping failed")
            await asyncio.sleep(self.config.housekeeping_seconds)

    def start(self) -> None:
        """Begin the periodic housekeeping in this process (the service calls this at start-up)."""
        self._ensure_periodic()

    async def close(self, grace: float = CLOSE_GRACE_S) -> None:
        """Stop housekeeping; give running work `grace` seconds, then cancel it (it resumes from its last step)."""
        self._closing = True
        tasks = [t for t in (self._periodic, self._draining) if t is not None and not t.done()]
        if self._periodic is not None:
            self._periodic.cancel()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace)
            for task in pending:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._periodic = self._draining = None
        self._closing = False


def turn_runner(engine: Engine, store: ConversationStore, config: TurnConfig | None = None) -> TurnRunner:
    """The engine's one runner (made on first use); `config`, when given, replaces its settings."""
    runner: TurnRunner | None = engine.__dict__.get(_REGISTRY)
    if runner is None:
        runner = engine.__dict__[_REGISTRY] = TurnRunner(engine, store, config or TurnConfig())
    elif config is not None:
        runner.config = config
    return runner


async def close_turn_runner(engine: Engine) -> None:
    runner: TurnRunner | None = engine.__dict__.get(_REGISTRY)
    if runner is not None:
        await runner.close()
