"""One worker per session with work (seed 003 R4): an asyncio task that consumes the session's packages in order.

Workers are spawned when a session opens or a package is queued, re-spawned when a process starts and by a
supervisor for every open session with unfinished packages (`rehydrate`: packages queued by other processes),
and cancelled when their session closes. A worker that finds nothing `idle_polls` times in a row retires, so
an idle process holds no task per session and polls nothing but the index of unfinished packages; the next
package spawns the worker again. Polls read; only a claim that takes a package writes.

A worker claims the session's oldest unfinished package as a lease it renews while it works; a package whose
worker was killed is taken over as soon as its process is gone (or its lease runs out) and resumes from its
stored steps. A failed package is retried with backoff, then marked failed; errors are logged and the worker
goes on with the next package. A worker whose session disappears (its user was forgotten) stops at its next
write, which the store refuses.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Coroutine
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..models import EventAction, Panel, Scope
from ..stores.base import EventDraft
from .agent import TurnOutcome, run_learning_turn
from .records import Job, SessionGone
from .tools import ACTOR

if TYPE_CHECKING:
    from .runtime import AgentRuntime

__all__ = ["Workers"]

log = logging.getLogger("learnloop.agent")

Key = tuple[str, str]
_MAX_PAUSE = 30.0


class Workers:
    """The workers of one process, for every tenant of one engine."""

    def __init__(self, runtime: AgentRuntime) -> None:
        self._runtime = runtime
        self._tasks: dict[Key, asyncio.Task[None]] = {}
        self._wake: dict[Key, asyncio.Event] = {}
        self._supervisor: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._process = f"{socket.gethostname()}:{os.getpid()}"

    @property
    def running(self) -> bool:
        self._forget_closed_loop()
        return self._loop is not None

    def _forget_closed_loop(self) -> None:
        """Workers die with their event loop (a script's asyncio.run ended): start afresh on the next one."""
        if self._loop is not None and self._loop.is_closed():
            self._loop, self._supervisor = None, None
            self._tasks.clear()
            self._wake.clear()

    def serves(self, tenant: str, session: str) -> bool:
        """Whether this process has a live worker for the session."""
        task = self._tasks.get((tenant, session))
        return task is not None and not task.done() and self.running

    def sessions(self) -> list[Key]:
        return sorted(key for key, task in self._tasks.items() if not task.done())

    # -- lifecycle -----------------------------------------------------------------------------------

    async def start(self) -> int:
        """Start serving (idempotent): a worker for every open session of every tenant that has packages
        waiting. Needs a model."""
        self._runtime.require_model()
        self._forget_closed_loop()
        if self._loop is not None:
            return int(await self._on_worker_loop(self.rehydrate()))
        self._loop = asyncio.get_running_loop()
        # The first pass before the supervisor exists: on a slow start its own pass would spawn these workers
        # first, and this one would report none started.
        started = int(await self.rehydrate())
        if self._loop is asyncio.get_running_loop() and self._supervisor is None:
            self._supervisor = self._loop.create_task(self._supervise(), name="learnloop-agent-supervisor")
        return started

    async def rehydrate(self) -> int:
        """Spawn the missing workers of open sessions with unfinished packages (after a restart, or packages
        another process queued)."""
        await self._runtime.engine.ensure_started()
        sessions = await self._runtime.store.sessions_with_work()
        return sum(self._spawn_here(key) for key in sessions)

    async def stop(self) -> None:
        """Cancel every worker; their claimed packages go back to the queue untouched."""
        self._forget_closed_loop()
        loop, self._loop = self._loop, None
        if loop is None:
            return
        tasks = [t for t in (self._supervisor, *self._tasks.values()) if t is not None]
        self._supervisor = None
        self._tasks.clear()
        self._wake.clear()
        if loop is asyncio.get_running_loop():
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        else:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(_cancel_all(tasks), loop))

    async def spawn(self, tenant: str, session: str) -> bool:
        if not self.running:
            return False
        return bool(await self._on_worker_loop(self._spawn((tenant, session))))

    async def cancel(self, tenant: str, session: str) -> bool:
        """Stop a session's worker (its session was closed) and wait until it has."""
        task = self._tasks.pop((tenant, session), None)
        self._wake.pop((tenant, session), None)
        if task is None or not self.running:
            return False
        await self._on_worker_loop(_cancel_all([task]))
        return True

    async def reap(self, tenant: str) -> int:
        """Stop this process's workers of `tenant` whose session no longer exists (a forgotten user's), at
        once rather than at their next write; returns how many."""
        if not self.running:
            return 0
        alive = {s.session for s in await self._runtime.store.list_sessions(Scope(tenant=tenant), None)}
        gone = [key for key in list(self._tasks) if key[0] == tenant and key[1] not in alive]
        for key in gone:
            await self.cancel(*key)
        return len(gone)

    def wake(self, tenant: str, session: str) -> None:
        """A package was queued for the session: its worker looks now instead of at its next poll."""
        event, loop = self._wake.get((tenant, session)), self._loop
        if event is None or loop is None or loop.is_closed():
            return
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is loop:
            event.set()
        else:
            loop.call_soon_threadsafe(event.set)

    async def _on_worker_loop(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run on the loop the workers live on (a sync caller may be on another one)."""
        loop = self._loop
        if loop is None or loop is asyncio.get_running_loop():
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))

    async def _spawn(self, key: Key) -> bool:
        return self._spawn_here(key)

    def _spawn_here(self, key: Key) -> bool:
        existing = self._tasks.get(key)
        if self._loop is None or (existing is not None and not existing.done()):
            return False
        self._wake[key] = asyncio.Event()
        self._tasks[key] = self._loop.create_task(self._work(key), name=f"learnloop-agent:{key[0]}:{key[1]}")
        return True

    async def _supervise(self) -> None:
        while True:
            await asyncio.sleep(self._runtime.config.poll_seconds)
            try:
                await self.rehydrate()
            except Exception:
                log.exception("learning agent: looking for open sessions failed")

    # -- one session ---------------------------------------------------------------------------------

    async def _work(self, key: Key) -> None:
        tenant, session = key
        claimer = f"{self._process}:{uuid.uuid4().hex[:12]}"
        wake = self._wake[key]
        pause = 0.5
        idle = 0
        try:
            while True:
                wake.clear()  # before claiming: a package queued after the claim sets it again
                config, store = self._runtime.config, self._runtime.store
                try:
                    claim = await store.claim(
                        tenant, session, claimer, self._runtime.engine.clock(), config.lease_seconds
                    )
                except Exception:
                    log.exception("learning agent: claiming a package of session %s/%s failed", tenant, session)
                    await asyncio.sleep(pause)
                    pause = min(_MAX_PAUSE, pause * 2)
                    continue
                pause = 0.5
                if claim.closed:
                    log.info("learning agent: session %s/%s is closed or gone; its worker stops", tenant, session)
                    return
                if claim.job is not None and claim.job.attempts > config.max_attempts:
                    # Every earlier claim ended with its worker gone mid-package: stop feeding it to workers.
                    idle = 0
                    await self._give_up(claim.job)
                    continue
                if claim.job is not None:
                    idle = 0
                    if not await self._handle(claim.job):
                        return
                    continue
                # A package held back (retry backoff, another live worker's lease) is work to come; an empty
                # queue is idleness, and a worker idle for `idle_polls` polls retires.
                idle = 0 if claim.retry_in is not None else idle + 1
                if idle >= config.idle_polls and not wake.is_set():
                    # No await between this check and leaving `_tasks` (the finally below): a `submit` on this
                    # loop either woke us before it (we go on) or finds no live worker after it (it spawns one).
                    log.debug("learning agent: session %s/%s is idle; its worker retires", tenant, session)
                    return
                timeout = config.poll_seconds if claim.retry_in is None else min(claim.retry_in, config.poll_seconds)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), timeout)
        finally:
            if self._tasks.get(key) is asyncio.current_task():
                del self._tasks[key]
                self._wake.pop(key, None)

    async def _handle(self, job: Job) -> bool:
        """Work on a claimed package; False when its session is gone and the worker must stop."""
        runtime = self._runtime
        store, config, engine = runtime.store, runtime.config, runtime.engine
        heartbeat = asyncio.create_task(self._heartbeat(job))
        try:
            session = await store.get_session(Scope(tenant=job.tenant, user=job.user), job.session)
            if session is None:
                raise SessionGone(f"session {job.session!r} has disappeared", session=job.session)
            outcome = await run_learning_turn(runtime, session, job)
        except asyncio.CancelledError:
            heartbeat.cancel()
            with contextlib.suppress(Exception):
                await asyncio.shield(store.release(job))
            raise
        except SessionGone:
            # Its user was forgotten: the package and every row of the session are gone; record nothing.
            log.info("learning agent: session %s/%s disappeared; its worker stops", job.tenant, job.session)
            return False
        except Exception as exc:
            heartbeat.cancel()
            error = f"{type(exc).__name__}: {exc}"
            log.exception(
                "learning agent: package %s failed (attempt %d of %d)",
                job.package_id,
                job.attempts,
                config.max_attempts,
            )
            try:
                if job.attempts >= config.max_attempts:
                    await self._finish(job, None, error)
                else:
                    delay = config.retry_backoff * 2 ** (job.attempts - 1)
                    await store.retry_later(job, error, engine.clock() + timedelta(seconds=delay))
            except Exception:  # the lease hands the package to the next claim
                log.exception("learning agent: recording the failure of package %s failed", job.package_id)
            return True
        finally:
            heartbeat.cancel()
        try:
            await self._finish(job, outcome, None)
        except Exception:
            log.exception("learning agent: finishing package %s failed", job.package_id)
        return True

    async def _give_up(self, job: Job) -> None:
        error = f"abandoned: {job.attempts - 1} workers stopped in the middle of this package"
        log.error("learning agent: package %s %s; marking it failed", job.package_id, error)
        try:
            await self._finish(job, None, error)
        except Exception:
            log.exception("learning agent: marking package %s failed did not work", job.package_id)

    async def _finish(self, job: Job, outcome: TurnOutcome | None, error: str | None) -> None:
        runtime = self._runtime
        data: dict[str, Any] = {
            "session": job.session,
            "package": job.package_id,
            "turn": job.turn,
            "attempts": job.attempts,
            "status": "failed" if outcome is None else "done",
        }
        if outcome is not None:
            data |= {"rounds": outcome.rounds, "steps": outcome.steps, "summary": outcome.summary[:2000]}
            if outcome.stopped:
                data["stopped"] = outcome.stopped
        if error is not None:
            data["error"] = error[:1000]
        draft = EventDraft(actor=ACTOR, action=EventAction.LEARNING_DONE, panel=Panel.LEARNING, data=data)
        events = await runtime.store.finish(
            job,
            failed=outcome is None,
            error=error,
            event=draft,
            budget_tokens=runtime.config.conversation_tokens,
            now=runtime.engine.clock(),
        )
        runtime.engine.bus.publish(events)

    async def _heartbeat(self, job: Job) -> None:
        interval = self._runtime.config.lease_seconds / 3
        while True:
            await asyncio.sleep(interval)
            try:
                if not await self._runtime.store.renew(job, self._runtime.engine.clock()):
                    log.warning("learning agent: lost the claim on package %s to another worker", job.package_id)
                    return
            except Exception:
                log.exception("learning agent: renewing the claim on package %s failed", job.package_id)


async def _cancel_all(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
