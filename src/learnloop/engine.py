"""The parts every tenant view of a loop shares: store, embedder, bus, policies, clock."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from .capture.adjudicator import Adjudicator
from .capture.dedupe import DedupePolicy
from .capture.extractor import LLMExtractor
from .capture.feedback import FeedbackAnalyzer
from .capture.gate import WriteGate
from .capture.observer import RuleObserver
from .capture.pair_reader import with_pair_reader
from .embedders.base import Embedder, Purpose
from .events import EventBus
from .lifecycle import LifecyclePolicy
from .llms.base import ChatModel
from .models import DEFAULT_VOCABULARY, EventAction, Scope, Status, Vocabulary, utcnow
from .retrieval import RetrievalConfig, name_floor, noise_floor, used_floor
from .stores.base import ApplyResult, EventDraft, FollowUp, Operation, Store, Vector
from .stores.parts import parts_of

# The parts' protocols name records of the layers that use them (`learnloop.tools`, `learnloop.agent`), which
# import this module: imported for the type checker only.
if TYPE_CHECKING:
    from .stores.agent import AgentStore
    from .stores.archive import TenantArchive
    from .stores.conversations import ConversationStore
    from .stores.holdback import HoldbackStore
    from .stores.identities import IdentityStore
    from .stores.learning_metrics import LearningMetricsStore
    from .stores.profiles import ProfileStore
    from .stores.quarantine import QuarantineStore
    from .stores.service import ServiceStore
    from .stores.tools import ToolStore

__all__ = ["Engine", "StartupHook"]

# Start-up work of a layer above the engine, run once at the first `ensure_started` (the factory passes the
# write gate's recheck of stored learnings, `capture.quarantine`). A task it returns runs on in the
# background; `aclose` cancels it.
StartupHook = Callable[["Engine"], Awaitable["asyncio.Task[None] | None"]]

log = logging.getLogger("learnloop")

_VOCABULARY_TTL = 2.0


@dataclass
class Engine:
    store: Store
    embedder: Embedder
    llm: ChatModel | None = None
    policy: LifecyclePolicy = field(default_factory=LifecyclePolicy)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    default_vocabulary: Vocabulary = field(default_factory=lambda: DEFAULT_VOCABULARY)
    clock: Callable[[], datetime] = utcnow
    bus: EventBus = field(default_factory=EventBus)
    gate: WriteGate = field(default_factory=WriteGate)
    # None: the thresholds calibrated for the embedder's model (`DedupePolicy.for_model`).
    dedupe: DedupePolicy | None = None
    tool_status: Status = Status.VERIFIED
    # At most this many open review links per owner: past it, dedupe still keeps both learnings but stops
    # linking them, so the review queue stays something a person can work through.
    max_open_links: int = 200
    observer: RuleObserver = field(default_factory=RuleObserver)
    feedback: FeedbackAnalyzer = field(default_factory=FeedbackAnalyzer)
    _extractor: LLMExtractor | None = None
    # With a chat model: dedupe's grey-zone pairs go to one structured call (`capture.adjudicator`).
    adjudicate: bool = True
    _adjudicator: Adjudicator | None = None
    # Outcomes of writes by kind ("save.created", "save.refused.<rule>"): refusals leave no other trace.
    counters: Counter[str] = field(default_factory=Counter)
    # Called as sink(tenant, key) after each count; the service persists counts (never text) through one.
    count_sinks: list[Callable[[str, str], None]] = field(default_factory=list)
    # (tenant, vocabulary) given to `learnloop.open(vocabulary=...)`: stored in the database at start, so the
    # vocabulary belongs to the data and a later open without it keeps it.
    given_vocabulary: tuple[str, Vocabulary] | None = None
    _vocabularies: dict[tuple[str, str], tuple[float, Vocabulary]] = field(default_factory=dict)
    # The backend's optional parts on the same database (`stores.parts`); left None, the store's own.
    tools: ToolStore | None = None
    agent_store: AgentStore | None = None
    quarantine: QuarantineStore | None = None
    service: ServiceStore | None = None
    archive: TenantArchive | None = None
    conversations: ConversationStore | None = None
    holdback: HoldbackStore | None = None
    profiles: ProfileStore | None = None
    learning_metrics: LearningMetricsStore | None = None
    identities: IdentityStore | None = None
    startup: Sequence[StartupHook] = ()
    _started: bool = False
    _start_lock: threading.Lock = field(default_factory=threading.Lock)
    # Tasks that start-up hooks left running (the write gate's recheck after its rules changed).
    _background: list[asyncio.Task[None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        own = parts_of(self.store)
        watch = getattr(self.store, "watch_events", None)
        if watch is not None:  # another process's commits ring this process's streams (PostgreSQL)
            self.bus.watch(watch)
        self.tools = own.tools if self.tools is None else self.tools
        self.agent_store = own.agent if self.agent_store is None else self.agent_store
        self.quarantine = own.quarantine if self.quarantine is None else self.quarantine
        self.service = own.service if self.service is None else self.service
        self.archive = own.archive if self.archive is None else self.archive
        self.conversations = own.conversations if self.conversations is None else self.conversations
        self.holdback = own.holdback if self.holdback is None else self.holdback
        self.profiles = own.profiles if self.profiles is None else self.profiles
        self.learning_metrics = own.learning_metrics if self.learning_metrics is None else self.learning_metrics
        self.identities = own.identities if self.identities is None else self.identities
        # Cosine thresholds belong to one embedding model: unset ones take the embedder's calibration.
        model = self.embedder.model_id
        if self.dedupe is None:
            self.dedupe = with_pair_reader(DedupePolicy.for_model(model))
        if self.retrieval.min_similarity is None:
            self.retrieval = dataclasses.replace(self.retrieval, min_similarity=noise_floor(model))
        if self.retrieval.used_similarity is None:
            self.retrieval = dataclasses.replace(self.retrieval, used_similarity=used_floor(model))
        if self.retrieval.name_similarity is None:
            self.retrieval = dataclasses.replace(self.retrieval, name_similarity=name_floor(model))

    @property
    def dedupe_policy(self) -> DedupePolicy:
        """`dedupe`, resolved (it is set from the embedder when not given)."""
        assert self.dedupe is not None
        return self.dedupe

    @property
    def extractor(self) -> LLMExtractor | None:
        """The LLM extraction path of the observer, present when a chat model is configured."""
        if self.llm is not None and self._extractor is None:
            self._extractor = LLMExtractor(self.llm)
        return self._extractor

    @property
    def adjudicator(self) -> Adjudicator | None:
        """The dedupe adjudicator, present when a chat model is configured and `adjudicate` is on."""
        if self.llm is not None and self.adjudicate and self._adjudicator is None:
            self._adjudicator = Adjudicator(self.llm)
        return self._adjudicator if self.adjudicate else None

    async def ensure_started(self) -> None:
        if self._started:
            return
        await self.store.start()
        if self.given_vocabulary is not None:
            await self._keep_vocabulary(*self.given_vocabulary)
        with self._start_lock:
            first, self._started = not self._started, True
        if first:
            for hook in self.startup:
                task = await hook(self)
                if task is not None:
                    self._background.append(task)

    async def _keep_vocabulary(self, tenant: str, vocabulary: Vocabulary) -> None:
        stored = await self.store.get_vocabulary(tenant, vocabulary.namespace)
        if stored == vocabulary:
            return
        draft = EventDraft(
            actor="system:open",
            action=EventAction.VOCABULARY_CHANGED,
            data={"namespace": vocabulary.namespace, "categories": vocabulary.names},
        )
        self.bus.publish([await self.store.put_vocabulary(tenant, vocabulary, draft)])
        self.forget_vocabulary(tenant, vocabulary.namespace)

    async def apply(self, scope: Scope, operations: Sequence[Operation]) -> ApplyResult:
        await self.ensure_started()
        result = await self.store.apply(scope, operations)
        self.bus.publish(result.events)
        return result

    def submit(self, scope: Scope, operations: Sequence[Operation], *, then: FollowUp | None = None) -> None:
        """Apply in the background (in order with later store calls); events are published when done."""

        def done(future: Future[ApplyResult]) -> None:
            error = future.exception()
            if error is not None:
                log.error("background write failed: %s", error, exc_info=error)
                return
            self.bus.publish(future.result().events)

        self.store.submit(scope, operations, then=then).add_done_callback(done)

    async def embed_one(self, text: str, purpose: Purpose = "document") -> Vector:
        vectors = await self.embedder.embed([text], purpose=purpose)
        return np.ascontiguousarray(vectors[0], dtype=np.float32)

    async def vocabulary(self, tenant: str, namespace: str) -> Vocabulary:
        """The stored vocabulary of a namespace, else the loop's default re-labelled for it."""
        key = (tenant, namespace)
        cached = self._vocabularies.get(key)
        now = time.monotonic()
        if cached is not None and now - cached[0] < _VOCABULARY_TTL:
            return cached[1]
        await self.ensure_started()
        stored = await self.store.get_vocabulary(tenant, namespace)
        vocabulary = stored or self.default_vocabulary.model_copy(update={"namespace": namespace})
        self._vocabularies[key] = (now, vocabulary)
        return vocabulary

    def count(self, tenant: str, key: str) -> None:
        """Count a write outcome ("save.created", "save.refused.<rule>") in `counters` and in every sink."""
        self.counters[key] += 1
        for sink in self.count_sinks:
            try:
                sink(tenant, key)
            except Exception:  # bookkeeping must never fail a write that already happened
                log.exception("counter sink failed")

    def forget_vocabulary(self, tenant: str, namespace: str) -> None:
        self._vocabularies.pop((tenant, namespace), None)

    async def aclose(self) -> None:
        background, self._background = self._background, []
        for task in background:
            if not task.done():
                task.cancel()  # the gate's recheck resumes at the next start: its version is stored when it finishes
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        closers = [self.store.aclose(), self.embedder.aclose()]
        if self.llm is not None:
            closers.append(self.llm.aclose())
        await asyncio.gather(*closers)
