"""`loop.turn()`: one turn of the main agent in one block (seed 001 §7).

    async with loop.turn("alice", "revenue last month?", session="s1") as turn:
        prompt = turn.context                      # learnings, tool sections, experience: one budget
        await turn.tool_call("get_revenue", {"period": "last_month"}, result="…", ms=120)
        await turn.finish(answer)                  # the rest of §7 runs in the background, once

Begin retrieves (recording hits as `retrieve_context` does, unless the turn is a duplicate) and routes the tools
for the message; the turn is a row in the database from then on, so any process may record its tool calls or
finish it (`loop.turns`, `POST /api/turns`). Finishing is durable and idempotent; the work it queues runs in
`turns.work`. What the database keeps of the conversation follows the write gate's *redact* policy.

Seed 001 §8.6: a message that repeats the user's latest one within 30 s (`TurnConfig.duplicate_seconds`) — on any
channel, in any session; the same after NFKC, case folding and whitespace collapsing, to the same namespace and
tags (`capture.observe.message_hash`) — is a duplicate. `turn.duplicate_of` names the first turn and
`turn.cached_response` is its answer: send that again. While the first turn is still open it is None; `await
turn.cached()` asks again (poll it, or answer anew: a duplicate's finish changes nothing and returns its record,
whose `response` is the first turn's). A duplicate learns nothing, judges nothing, counts no hits and feeds no
tool signals.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..agent import AgentService, ExperienceContext
from ..capture.fields import redact_text, redact_values
from ..capture.observe import message_hash
from ..errors import ConfigurationError, NotFound, ValidationError
from ..holdback.assignment import context_assignment
from ..models import DEFAULT_NAMESPACE, Filters, Limits, RetrievalResult, Scope
from ..profile import ProfileService
from ..recall import record_retrieval, retrieve
from ..sdk_edge import sdk_edge
from ..stores.conversations import RESPONSE_REDACTED, ConversationStore, ConversationTurn, NewTurn, TurnStatus
from ..sync import SyncProxy, run_sync
from ..tokens import default_counter
from ..tools.intelligence import tools_of
from ..tools.models import RoutedTool
from .config import TurnConfig
from .runner import HousekeepingReport, close_turn_runner, turn_runner
from .work import agent_wanted

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = ["Turn", "TurnService"]

log = logging.getLogger("learnloop.turns")

_MAX_TEXT = 20_000  # message and response as kept on the conversation record
_MAX_RESULT = 2_000  # a tool call's result as kept (the tool layer learns from outcomes, not payloads)
_NAME = 200
_UNCAPPED_CHARS = 1_000_000  # a turn's budget is in tokens; characters are not capped besides


@sdk_edge
class TurnService:
    """Turns of one tenant: `loop.turns`. `loop.turn(...)` is the usual way in; these calls serve a turn that
    another request or process began (the REST API), and housekeeping."""

    __learnloop_async__ = True

    def __init__(self, engine: Engine, tenant: str) -> None:
        self._engine = engine
        self.tenant = Scope(tenant=tenant).tenant

    def __repr__(self) -> str:
        return f"TurnService(tenant={self.tenant!r})"

    @property
    def store(self) -> ConversationStore:
        store = self._engine.conversations
        if store is None:
            raise ConfigurationError(f"{self._engine.store!r} keeps no conversations: turns need a backend that does")
        return store

    @property
    def config(self) -> TurnConfig:
        return turn_runner(self._engine, self.store).config

    def configure(self, config: TurnConfig) -> None:
        """Expiry, the silence window, retries, the learning agent: for every tenant of this loop."""
        turn_runner(self._engine, self.store, config)

    def _scope(self, user: str | None) -> Scope:
        return Scope(tenant=self.tenant, user=user)

    async def begin(
        self,
        user: str | None,
        message: str,
        *,
        session: str = "default",
        channel: str = "",
        namespace: str | None = None,
        filters: Filters | None = None,
        limits: Limits | None = None,
        tags: Sequence[str] = (),
        at: datetime | None = None,
        id: str | None = None,
    ) -> Turn:
        """Retrieve and route for `message` and open the turn (see the module's docstring)."""
        if not isinstance(message, str) or not message.strip():
            raise ValidationError("message is empty", field="message")
        engine = self._engine
        await engine.ensure_started()
        store = self.store
        runner = turn_runner(engine, store)
        scope = self._scope(user)
        turn_id = _identifier(id, "id") if id is not None else uuid.uuid4().hex
        session = _identifier(session, "session")
        channel = channel if not channel else _identifier(channel, "channel")
        limits = _turn_limits(limits, runner.config)
        filters = filters or Filters()
        if namespace is not None:
            filters = filters.model_copy(update={"namespace": namespace})
        if tags:
            filters = filters.model_copy(update={"tags": [*(filters.tags or []), *tags]})
        if channel and filters.channel is None:  # what was said for another channel stays there
            filters = filters.model_copy(update={"channel": channel})
        now = at or engine.clock()
        # The holdback experiment's one gate: every part of the context below that holds memory asks it.
        assignment = await context_assignment(engine, scope, filters.namespace)
        vector = await engine.embed_one(message.strip()[:2_000], purpose="query")
        profile = await ProfileService(engine, self.tenant).section(user) if assignment.shows_memory else None
        retrieval = await retrieve(
            engine,
            scope,
            message,
            filters=filters,
            limits=limits,
            query_vector=vector,
            at=now,
            session=session,
            assignment=assignment,
            sections=[profile] if profile else [],
            counter=runner.config.token_counter or default_counter(),
            record=False,  # recorded below once the turn is known not to repeat one
        )
        routed: list[RoutedTool] = []
        if engine.tools is not None:
            routed = await tools_of(engine, self.tenant).route(message, user=user, query_vector=vector)
        experience = (
            await self._experience(scope, session, message, limits, retrieval)
            if agent_wanted(engine, runner.config) and assignment.shows_memory
            else None
        )
        stored = redact_text(engine.gate, message)
        # A redacted message is no duplicate of anything: two requests that differ only in what was blanked out
        # ("email it to alice@…", "… to bob@…") would read the same.
        digest = message_hash(stored, filters.namespace or DEFAULT_NAMESPACE, tags) if stored is message else ""
        record = NewTurn(
            id=turn_id,
            session=session,
            channel=channel,
            message=stored[:_MAX_TEXT],
            message_hash=digest,
            context={
                "shown": [{"id": i.learning.id, "used": i.used} for i in retrieval.items],
                "routed": [r.name for r in routed],
                "experience": list(experience.files) if experience else [],
                "namespace": filters.namespace or DEFAULT_NAMESPACE,
                "tags": list(tags),
                "refused": stored is not message,
            }
            | ({"holdback": assignment.record()} if assignment.record() else {}),
            started_at=now,
            expires_at=now + timedelta(seconds=runner.config.expire_seconds),
        )
        row = await store.begin_turn(scope, record, runner.config.duplicate_seconds)
        if row.duplicate_of is None:
            record_retrieval(engine, scope, retrieval, assignment)
            runner.start()
        else:
            where = {"tenant": self.tenant, "turn_id": row.id, "session": session, "channel": channel}
            log.info("turn_duplicate", extra={"event": "turn_duplicate", **where, "duplicate_of": row.duplicate_of})
        return Turn(self, row, retrieval=retrieval, tools=routed, experience=experience)

    async def _experience(
        self, scope: Scope, session: str, message: str, limits: Limits, retrieval: RetrievalResult
    ) -> ExperienceContext | None:
        """The learning agent's files, in what the block leaves of the budget (learnings come first)."""
        budget = (limits.max_tokens or limits.max_chars // 4) - retrieval.tokens
        if budget < 50:
            return None
        agent = AgentService(self._engine, self.tenant)
        try:
            return await agent.experience_context(session, user=scope.user, query=message, max_tokens=budget)
        except NotFound:  # no agent session of that name yet: the user's own workspace
            return await agent.experience_context(None, user=scope.user, query=message, max_tokens=budget)

    def start(self) -> None:
        """Run housekeeping in the background of this process from now on (a service calls this at start-up;
        beginning a turn does it too)."""
        turn_runner(self._engine, self.store).start()

    async def stop(self) -> None:
        """Stop this process's housekeeping and give running work a few seconds (it resumes where it stopped)."""
        await close_turn_runner(self._engine)

    async def get(self, turn_id: str, *, user: str | None = None) -> ConversationTurn:
        found = await self.store.get_turn(self._scope(user), turn_id)
        if found is None:
            raise NotFound(f"no turn {turn_id!r}")
        return found

    async def list(
        self,
        *,
        user: str | None = None,
        session: str | None = None,
        status: Sequence[TurnStatus] = (),
        limit: int = 100,
        channel: str | None = None,
    ) -> list[ConversationTurn]:
        return await self.store.list_turns(
            self._scope(user), session=session, status=status, limit=limit, channel=channel
        )

    async def tool_call(
        self,
        turn_id: str,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result: Any = None,
        error: str | None = None,
        ms: float | None = None,
        user: str | None = None,
        call_id: str | None = None,
    ) -> int:
        """Record one tool call of an open turn as it happens (an `error` marks it failed); returns how many the
        turn has. Durable when this returns. `call_id` (the model's tool-call id) makes a retried report safe:
        a call whose id the turn holds is not recorded again. Calls reported on a duplicate turn are kept on its
        record and teach the tool layer nothing; a turn's identical calls count once there."""
        if not isinstance(name, str) or not name.strip() or len(name) > _NAME:
            raise ValidationError(f"a tool call needs a name of 1-{_NAME} characters", field="name")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise ValidationError("arguments must be an object", field="arguments")
        if ms is not None and (not isinstance(ms, int | float) or ms < 0):
            raise ValidationError("ms must be a non-negative number", field="ms")
        if call_id is not None:
            call_id = _identifier(call_id, "call_id")
        scope = self._scope(user)
        gate = self._engine.gate
        call = {
            "name": name.strip(),
            "arguments": redact_values(gate, dict(arguments or {})),
            "result": None if result is None else redact_text(gate, _as_text(result))[:_MAX_RESULT],
            "error": None if error is None else redact_text(gate, str(error))[:1_000],
            "ms": ms,
        } | ({"id": call_id} if call_id is not None else {})
        return await self.store.add_tool_call(scope, turn_id, call, self._engine.clock(), self.config.max_tool_calls)

    async def finish(
        self, turn_id: str, response: str = "", *, meta: Mapping[str, Any] | None = None, user: str | None = None
    ) -> ConversationTurn:
        """Finish the turn with the answer given: durable when this returns, the work runs in the background. A
        second finish of the same turn, or any finish of a duplicate, changes nothing and returns it as it is."""
        if not isinstance(response, str):
            raise ValidationError("response must be a string", field="response")
        if meta is not None and not isinstance(meta, Mapping):
            raise ValidationError("meta must be an object", field="meta")
        gate = self._engine.gate
        stored = redact_text(gate, response)
        kept_meta = redact_values(gate, dict(meta or {}))
        if stored is not response:  # not the answer as sent: a repeat must not be answered with the blanked form
            kept_meta[RESPONSE_REDACTED] = True
        receipt = await self.store.finish_turn(
            self._scope(user), turn_id, stored[:_MAX_TEXT], kept_meta, self._engine.clock()
        )
        if receipt.first:
            turn_runner(self._engine, self.store).wake()
        return receipt.turn

    async def housekeeping(self, now: datetime | None = None) -> HousekeepingReport:
        """Abandon expired turns, score silent ones, run work left behind (every tenant; runs on its own too)."""
        await self._engine.ensure_started()
        return await turn_runner(self._engine, self.store).housekeeping(now)

    async def drain(self) -> int:
        """Wait until the work of every finished turn has run; returns how many turns this call ran."""
        return await turn_runner(self._engine, self.store).drain()


class Turn:
    """One turn, begun. `async with loop.turn(...)`; `with loop.sync.turn(...)` blocks instead."""

    __learnloop_async__ = True

    def __init__(
        self,
        service: TurnService,
        row: ConversationTurn | None = None,
        *,
        retrieval: RetrievalResult | None = None,
        tools: Sequence[RoutedTool] = (),
        experience: ExperienceContext | None = None,
        begin: Mapping[str, Any] | None = None,
    ) -> None:
        self._service = service
        self._row = row
        self._begin = dict(begin or {})
        self.retrieval = retrieval
        self.tools = list(tools)
        self.experience = experience

    def __repr__(self) -> str:
        return f"Turn(id={self.id!r}, status={self.status!r})" if self._row else "Turn(not begun)"

    @property
    def row(self) -> ConversationTurn:
        if self._row is None:
            raise ValidationError("the turn has not begun: use `async with loop.turn(...) as turn`")
        return self._row

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def status(self) -> str:
        return self.row.status

    @property
    def channel(self) -> str:
        return self.row.channel

    @property
    def duplicate_of(self) -> str | None:
        """The id of the turn this one repeats (seed 001 §8.6), or None for a turn of its own."""
        return self.row.duplicate_of

    @property
    def cached_response(self) -> str | None:
        """A duplicate's answer: the first turn's response as it was when this turn began (None while that turn is
        still open, and for a turn of its own)."""
        return self.row.response if self.row.duplicate_of is not None else None

    async def cached(self) -> str | None:
        """The first turn's response now (for a duplicate begun while the first was still open). It stays None if
        the first turn is never finished (`loop.turns.get(turn.duplicate_of)` says `abandoned`): answer anew."""
        if self.row.duplicate_of is None:
            return None
        self._row = await self._service.get(self.id, user=self.row.user)
        return self.cached_response

    @property
    def context(self) -> str:
        """What to put before the model's call: the learnings block (with the tool sections), then the learning
        agent's experience files when there are any."""
        parts = [self.retrieval.block if self.retrieval else "", self.experience.text if self.experience else ""]
        return "\n\n".join(p for p in parts if p)

    async def tool_call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result: Any = None,
        error: str | None = None,
        ms: float | None = None,
        call_id: str | None = None,
    ) -> int:
        return await self._service.tool_call(
            self.id, name, arguments, result=result, error=error, ms=ms, user=self.row.user, call_id=call_id
        )

    async def finish(self, response: str = "", *, meta: Mapping[str, Any] | None = None) -> ConversationTurn:
        self._row = await self._service.finish(self.id, response, meta=meta, user=self.row.user)
        return self._row

    async def _start(self) -> Turn:
        if self._row is None:
            begun = await self._service.begin(**self._begin)
            self._row, self.retrieval, self.tools, self.experience = (
                begun.row,
                begun.retrieval,
                begun.tools,
                begun.experience,
            )
        return self

    async def __aenter__(self) -> Turn:
        return await self._start()

    async def __aexit__(self, *exc: object) -> None:
        # Not finished: the turn stays open for another process to finish, and expires as abandoned if none does.
        return None

    def __enter__(self) -> Any:
        run_sync(self._start())
        return SyncProxy(self)

    def __exit__(self, *exc: object) -> None:
        return None


def _turn_limits(limits: Limits | None, config: TurnConfig) -> Limits:
    """Seed 001 §8.9's token budget unless the caller set one; characters capped only where the caller said so
    (limits given for counts alone, `Limits(top_k=3)`, keep the token budget and no character cap)."""
    limits = limits or Limits()
    given = limits.model_fields_set
    update: dict[str, int] = {}
    if "max_chars" not in given:
        update["max_chars"] = _UNCAPPED_CHARS
    if limits.max_tokens is None:
        update["max_tokens"] = config.max_tokens
    return limits.model_copy(update=update) if update else limits


def _identifier(value: str, field: str) -> str:
    if not isinstance(value, str) or not value or len(value) > _NAME or any(c.isspace() for c in value):
        raise ValidationError(f"{field} must be 1-{_NAME} characters without spaces", field=field)
    return value


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, default=str)
    except (TypeError, ValueError):
        return str(value)
