"""`loop.tools`: tool intelligence for one tenant — catalog, routing, usage signals, templates, recovery
patterns, statistics, insights.

    tools = loop.tools
    await tools.register([{"name": "get_forecast", "description": "Weather forecast for a city"}])
    shown = await tools.set_context("s1", "will it rain in Paris tomorrow?", user="alice")
    receipt = await tools.record_call("s1", "get_forecast", {"city": "Paris"}, ok=True, latency_ms=120)

`set_context` opens a correlation window and computes the query vector once; everything recorded in the
session until the next `set_context` is attributed to that query and reuses the vector, so recording never
calls the embedder. A recorded signal is durable when `record_call` returns. Argument values and error
texts pass the engine's write gate before they are stored; what the tenant shares keeps only call shapes
(`learnloop.tools.shapes`).

Background passes (weak-signal batches, insight aggregation) are drained and then cancelled by
`close_tools(engine)`, which `Loop.aclose()` calls before the store closes.
"""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..engine import Engine
from ..errors import ValidationError
from ..models import Scope
from ..sdk_edge import sdk_edge
from ..stores.base import Vector
from ..terms import MAX_QUERY_CHARS
from . import catalog
from .base import CallRecord, ObservationRecord
from .config import ToolConfig
from .knowledge import ToolKnowledgeView
from .models import (
    PrivacyMode,
    QueryTemplate,
    RegisterReport,
    RoutedTool,
    SignalKind,
    SignalReceipt,
    Strength,
    ToolInfo,
)
from .recovery import classify_error
from .router import route
from .signals import SessionWindow, SessionWindows, query_hash
from .templates import MATCH_CONFIDENCE

__all__ = ["CLOSE_TIMEOUT_S", "ToolIntelligence", "close_tools", "live_tools", "tools_of"]

log = logging.getLogger("learnloop.tools")

# How long closing waits for background passes before it cancels them.
CLOSE_TIMEOUT_S = 5.0


@sdk_edge
class ToolIntelligence(ToolKnowledgeView):
    """Tool intelligence for one tenant. Async methods; `loop.sync.tools` for blocking callers."""

    __learnloop_async__ = True

    def __init__(self, engine: Engine, tenant: str, config: ToolConfig | None = None) -> None:
        super().__init__(engine, tenant, config)
        self._windows = SessionWindows(self.config.max_sessions)
        self._background: set[asyncio.Task[Any]] = set()
        self._closing = False
        self._pending_weak = 0
        self._last_flush = time.monotonic()
        self._calls = 0

    def __repr__(self) -> str:
        return f"ToolIntelligence(tenant={self.tenant!r})"

    # -- catalog -----------------------------------------------------------------------------------------

    async def register(
        self, tools: Iterable[catalog.ToolLike | Any], *, server: str = "", replace: bool = False
    ) -> RegisterReport:
        """Add or update tools (`ToolDef`s, mappings or `mcp.types.Tool`s); only changed descriptions are
        embedded. With `replace`, the server's tools that are not listed are removed."""
        store = await self._ready()
        now = self._engine.clock()
        report = await catalog.register(
            store, self._engine.embedder, self.tenant, tools, now, server=server, replace=replace
        )
        self._constants = None  # the schemas' enum values may have changed: read them again on the next call
        return report

    async def unregister(self, names: Sequence[str]) -> int:
        removed = await (await self._ready()).remove_tools(self.tenant, list(names))
        self._constants = None
        return removed

    async def catalog(self, *, server: str | None = None) -> list[ToolInfo]:
        store = await self._ready()
        return await store.list_tools(self.tenant, server=server, embedding_model=self._engine.embedder.model_id)

    # -- context and routing -------------------------------------------------------------------------------

    async def route(
        self,
        query: str | None = None,
        k: int | None = None,
        *,
        user: str | None = None,
        query_vector: Vector | None = None,
        learned: bool = True,
        context: str | None = None,
    ) -> list[RoutedTool]:
        """The `k` tools to show for `query` (no query: the most used tools). `learned=False` ranks by
        descriptions and keywords only, as before any learning. `context=` is the deprecated name of `query`
        (the name `set_context`, search and the REST API use)."""
        if context is not None:
            warnings.warn("route(context=...) is deprecated; pass query=...", DeprecationWarning, stacklevel=2)
            if query is not None:
                raise ValidationError("pass query, not both query and its old name context", field="context")
            query = context
        store = await self._ready()
        k = k or self.config.k
        if not query or not query.strip():
            popular = await store.popular_tools(self._scope(user), k)
            return [_routed(e) for e in popular]
        query = query.strip()[:MAX_QUERY_CHARS]
        vector = await self._vector(query, query_vector)
        weights = self.config.weights
        now = self._engine.clock()
        share = self.config.share_learning
        return await route(store, self._scope(user), query, vector, k, weights, now, share=share, use_learned=learned)

    async def set_context(
        self,
        session: str,
        query: str,
        *,
        user: str | None = None,
        intent: str | None = None,
        k: int | None = None,
        query_vector: Vector | None = None,
    ) -> list[RoutedTool]:
        """Start a new correlation window in `session` (seed 002) and return the routed tools for `query`,
        recorded as a tools/list with context."""
        if not query or not query.strip():
            raise ValidationError("query is empty", field="query")
        query = query.strip()[:MAX_QUERY_CHARS]
        vector = await self._vector(query, query_vector)
        routed = await self.route(query, k, user=user, query_vector=vector)
        await self.open_window(session, query, [r.name for r in routed], user=user, intent=intent, query_vector=vector)
        return routed

    async def open_window(
        self,
        session: str,
        query: str,
        shown: Sequence[str],
        *,
        user: str | None = None,
        intent: str | None = None,
        query_vector: Vector | None = None,
    ) -> None:
        """`set_context` with the tools already chosen: open `session`'s window for `query`, with `shown` recorded
        as the tools/list the agent saw (a turn routes when it begins and records its signals when it is done)."""
        if not query or not query.strip():
            raise ValidationError("query is empty", field="query")
        await self._ready()
        query = query.strip()[:MAX_QUERY_CHARS]
        vector = await self._vector(query, query_vector)
        if intent is None and self.config.intent_classifier is not None:
            intent = self.config.intent_classifier(query)
        window = SessionWindow(
            session=session,
            user=user,
            query=query,
            query_hash=query_hash(self.tenant, query),
            vector=vector,
            intent=intent or "",
        )
        replaced = self._windows.peek(session)
        if replaced is not None and replaced.user == user:
            window.unobserved, window.awaiting_verdict = replaced.unobserved, replaced.awaiting_verdict
        window.show(shown)
        self._windows.open(window)
        await self._observe(window, SignalKind.LIST, list(shown))

    async def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        user: str | None = None,
        session: str | None = None,
        query_vector: Vector | None = None,
    ) -> list[RoutedTool]:
        """`search_available_tools`: the whole catalog ranked for `query`; recorded in `session` if given."""
        found = await self.route(query, limit or self.config.search_limit, user=user, query_vector=query_vector)
        if session is not None:
            await self.record_search(session, query, [r.name for r in found], user=user)
        return found

    # -- signals -----------------------------------------------------------------------------------------

    async def _observe(
        self, window: SessionWindow, kind: SignalKind, names: Sequence[str], query: str | None = None
    ) -> int:
        mode = await self._privacy_of(window.user)
        text = query if query is not None else window.query
        record = ObservationRecord(
            session=window.session,
            kind=kind,
            tools=tuple(names),
            intent=window.intent,
            query_hash=None if mode is PrivacyMode.OPT_OUT or not text else query_hash(self.tenant, text),
            query_text=self._stored_text(text) if mode is PrivacyMode.FULL else None,
        )
        return await self.store.record_observation(self._scope(window.user), record, self._engine.clock())

    def _stored_text(self, text: str | None) -> str | None:
        """A user's query or intent as stored: the write gate's *redact* policy (`capture.fields`)."""
        return self.redactor.text(text) if text else text

    async def record_list(self, session: str, tools: Sequence[str], *, user: str | None = None) -> int:
        """A tools/list the agent saw in `session`: those tools count as retrieved for the window."""
        await self._ready()
        window = self._windows.get_or_open(session, user)
        window.show(tools)
        return await self._observe(window, SignalKind.LIST, list(tools))

    async def record_search(self, session: str, query: str, results: Sequence[str], *, user: str | None = None) -> int:
        """A search_available_tools and its results: those tools count as searched for the window."""
        await self._ready()
        window = self._windows.get_or_open(session, user)
        window.found(results)
        return await self._observe(window, SignalKind.SEARCH, list(results), query=query)

    async def record_call(
        self,
        session: str,
        tool: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ok: bool = True,
        error: str | None = None,
        error_type: str | None = None,
        latency_ms: float | None = None,
        user: str | None = None,
        intent: str | None = None,
    ) -> SignalReceipt:
        """A tools/call and its outcome. Durable when this returns; strong, very strong and discovery
        signals are learned from at once, weak ones in the next batch."""
        store = await self._ready()
        window = self._windows.get(session)
        if window is not None and user is not None and window.user != user:
            window = None
        user = user if user is not None else (window.user if window else None)
        mode = await self._privacy_of(user)
        shaper = await self._shaper()
        raw = dict(arguments or {})
        # What is stored of the user's call: every value the write gate refuses is redacted first.
        args = self.redactor.arguments(raw)
        strength = window.strength_of(tool) if window is not None else Strength.WEAK
        learnable = window is not None and window.vector is not None and mode is not PrivacyMode.OPT_OUT
        if not ok:
            error_type = error_type or classify_error(error)
        record = CallRecord(
            session=session,
            tool=tool,
            arguments=args,
            ok=ok,
            signature=shaper.signature(tool, raw),
            intent=self._stored_text(intent if intent is not None else (window.intent if window else "")) or "",
            error=None if error is None else self.redactor.text(error),
            error_type=None if ok else error_type,
            fingerprint=None if ok or error_type is None else shaper.fingerprint(error_type, tool, raw),
            latency_ms=latency_ms,
            strength=strength,
            # A failed call still says which tool the query needed, less surely than a successful one.
            weight=self.config.strength_weights[strength] * (1.0 if ok else 0.5) if learnable else 0.0,
            apply_now=strength is not Strength.WEAK,
            query_hash=window.query_hash if learnable and window else None,
            query_text=self._stored_text(window.query) if window and mode is PrivacyMode.FULL else None,
            vector=window.vector if learnable and window else None,
            embedding_model=self._engine.embedder.model_id,
            shared=self.config.share_learning,
            example=self._stored_text(window.query) if ok and window and mode is PrivacyMode.FULL else None,
            pattern=shaper.shape(tool, raw),
            shape=shaper.shape,
        )
        receipt = await store.record_call(self._scope(user), record, self.config.learning, self._engine.clock())
        if ok and window is not None and receipt.template_id is not None:
            window.template_ids.append(receipt.template_id)
            window.unobserved.append(receipt.template_id)
            window.failed_templates.discard(receipt.template_id)
        if not ok and receipt.template_id is not None:
            failed = {receipt.template_id}
            if window is not None:
                window.failed_templates.add(receipt.template_id)
                failed = window.failed_templates
            # Without an intent, "the next best" is only meaningful among ways of calling the same tool.
            same_tool = None if record.intent else tool
            fallback = await self.best_template(intent=record.intent, tool=same_tool, user=user, exclude=failed)
            receipt = receipt.model_copy(update={"fallback": fallback})
        self._after_call(receipt)
        return receipt

    async def best_template(
        self,
        *,
        intent: str | None = None,
        query: str | None = None,
        query_vector: Vector | None = None,
        tool: str | None = None,
        arguments: Mapping[str, Any] | None = None,
        user: str | None = None,
        min_confidence: float = MATCH_CONFIDENCE,
        exclude: Iterable[int] = (),
        session: str | None = None,
    ) -> QueryTemplate | None:
        """`ToolKnowledgeView.best_template`; with `session`, templates whose pattern failed in the session's
        window are left out, so the next best is tried (seed 001 §8.3)."""
        window = self._windows.peek(session) if session is not None else None
        skipped = {*exclude, *(window.failed_templates if window is not None else ())}
        return await super().best_template(
            intent=intent,
            query=query,
            query_vector=query_vector,
            tool=tool,
            arguments=arguments,
            user=user,
            min_confidence=min_confidence,
            exclude=skipped,
        )

    def _after_call(self, receipt: SignalReceipt) -> None:
        self._calls += 1
        if not receipt.applied:
            self._pending_weak += 1
        overdue = time.monotonic() - self._last_flush >= self.config.weak_batch_seconds
        if self._pending_weak >= self.config.weak_batch_size or (self._pending_weak and overdue):
            self._pending_weak = 0
            self._last_flush = time.monotonic()
            self._spawn(self.flush())
        if self.config.insight_every and self._calls % self.config.insight_every == 0:
            self._spawn(self.aggregate_insights())

    def _spawn(self, work: Any) -> None:
        if self._closing:  # the store is about to close: the next `flush`/aggregation picks the work up
            work.close()
            return

        async def guarded() -> None:
            try:
                await work
            except Exception:  # a background pass must never take the caller down
                log.exception("background tool-knowledge pass failed")

        task = asyncio.get_running_loop().create_task(guarded())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def drain(self) -> None:
        """Wait for background passes (weak-signal batches, insight aggregation) started so far."""
        while self._background:
            await asyncio.gather(*list(self._background))

    async def close(self, grace: float = CLOSE_TIMEOUT_S) -> None:
        """Before the store closes: wait up to `grace` seconds for background passes, then cancel the rest.
        None starts meanwhile. A weak signal not folded in yet is durable and waits for the next batch."""
        self._closing = True
        try:
            pending = set(self._background)
            if pending:
                _, pending = await asyncio.wait(pending, timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
        finally:
            self._closing = False

    async def flush(self) -> int:
        """Fold queued weak signals into the learned pairs now."""
        store = await self._ready()
        flushed = 0
        while batch := await store.flush_weak(self.tenant, self.config.learning, self._engine.clock()):
            flushed += batch
        return flushed

    async def feedback(self, session: str, score: float, *, user: str | None = None) -> list[QueryTemplate]:
        """Response-quality feedback (seed 001 §4.4, −1..1) on the templates used in the session's window."""
        store = await self._ready()
        window = self._windows.get(session)
        if window is None or not window.template_ids:
            return []
        scope = self._scope(user if user is not None else window.user)
        return await store.template_feedback(scope, sorted(set(window.template_ids)), score, self._engine.clock())

    async def observed_turn(self, session: str, score: float | None, *, user: str | None = None) -> list[QueryTemplate]:
        """`observe()`'s hook, once per turn of `session`: `score` (its verdict on the previous turn; None on a
        first turn) goes to the templates reinforced during that turn, and those reinforced since then wait for
        the next verdict. Unlike `feedback`, which credits the whole current window, a window the next
        `set_context` opened before the verdict arrived does not take a verdict meant for the turn before."""
        window = self._windows.peek(session)
        if window is None or (user is not None and window.user != user):
            return []
        judged, window.awaiting_verdict, window.unobserved = window.awaiting_verdict, window.unobserved, []
        if score is None or not judged:
            return []
        store = await self._ready()
        scope = self._scope(user if user is not None else window.user)
        return await store.template_feedback(scope, sorted(set(judged)), score, self._engine.clock())

    def session_user(self, session: str) -> tuple[bool, str | None]:
        """Whether `session` has an open correlation window, and whose it is (the service keeps one user's
        key from reusing, and so replacing, another user's window)."""
        window = self._windows.peek(session)
        return (False, None) if window is None else (True, window.user)


_REGISTRY = "_learnloop_tool_intelligence"


def tools_of(engine: Engine, tenant: str) -> ToolIntelligence:
    """The tenant's one `ToolIntelligence` on `engine`. Every view of a loop shares it (the service makes a
    `loop.for_tenant(...)` per request), so the window one request's `set_context` opens is there when the
    next records the call, and `observe()` finds it. Kept on the engine object rather than in a module-level
    map so that it goes away with the engine (it holds the engine, which would keep a map entry alive)."""
    live: dict[str, ToolIntelligence] = engine.__dict__.setdefault(_REGISTRY, {})
    tenant = Scope(tenant=tenant).tenant
    found = live.get(tenant)
    if found is None:
        found = live[tenant] = ToolIntelligence(engine, tenant)
    return found


async def close_tools(engine: Engine, grace: float = CLOSE_TIMEOUT_S) -> None:
    """Drain, then cancel, the background passes of every `ToolIntelligence` on `engine` (all tenants at once,
    `grace` seconds at most): for `Loop.aclose()`, before the store closes."""
    live: dict[str, ToolIntelligence] = engine.__dict__.get(_REGISTRY, {})
    if live:
        await asyncio.gather(*(tools.close(grace) for tools in list(live.values())))


def live_tools(engine: Engine, tenant: str) -> ToolIntelligence | None:
    """The tenant's `ToolIntelligence` if something has used it on `engine`; never creates one."""
    live: dict[str, ToolIntelligence] = engine.__dict__.get(_REGISTRY, {})
    return live.get(Scope(tenant=tenant).tenant)


def _routed(evidence: Any) -> RoutedTool:
    return RoutedTool(
        name=evidence.name,
        server=evidence.server,
        description=evidence.description,
        input_schema=evidence.input_schema,
        score=0.0,
        description_similarity=0.0,
        keyword=0.0,
        learned=0.0,
        learned_uses=evidence.learned_uses,
        why=f"no context yet; used {evidence.learned_uses}×",
    )
