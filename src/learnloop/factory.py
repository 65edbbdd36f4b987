"""Wiring: settings in, a ready `Loop` out."""

from __future__ import annotations

from typing import Any

from .capture.calibration import load_policy
from .capture.quarantine import start_background_recheck
from .config import Settings
from .embedders.base import Embedder
from .engine import Engine, StartupHook
from .lifecycle import LifecyclePolicy
from .loop import Loop
from .models import DEFAULT_VOCABULARY, Vocabulary
from .retrieval import RetrievalConfig
from .stores.base import Store
from .stores.parts import StoreParts, parts_of

__all__ = ["STARTUP", "build_engine", "build_loop", "open"]

# Run at a loop's first start: a changed write gate rechecks the stored learnings in the background.
STARTUP: tuple[StartupHook, ...] = (start_background_recheck,)


def build_engine(store: Store, embedder: Embedder, *, parts: StoreParts | None = None, **options: Any) -> Engine:
    """An engine on `store` with the backend's parts (`parts`, else the store's own) and the start-up hooks
    (`STARTUP`, unless `startup=` is given); `options` are the engine's other fields."""
    parts = parts_of(store) if parts is None else parts
    options.setdefault("startup", STARTUP)
    return Engine(
        store=store,
        embedder=embedder,
        tools=parts.tools,
        agent_store=parts.agent,
        quarantine=parts.quarantine,
        service=parts.service,
        archive=parts.archive,
        conversations=parts.conversations,
        holdback=parts.holdback,
        **options,
    )


def build_loop(
    settings: Settings,
    *,
    vocabulary: Vocabulary | dict[str, str] | None = None,
    policy: LifecyclePolicy | None = None,
    retrieval: RetrievalConfig | None = None,
) -> Loop:
    from .embedders import resolve_embedder
    from .llms import resolve_llm
    from .stores import open_store

    embedder = resolve_embedder(settings.embedder, settings)
    llm = resolve_llm(settings.llm, settings) if settings.llm else None
    store = open_store(settings.db, settings, embedding_model=embedder.model_id, dimension=embedder.dimension)
    if isinstance(vocabulary, dict):
        vocabulary = Vocabulary.from_mapping(vocabulary)
    engine = build_engine(
        store,
        embedder,
        llm=llm,
        policy=policy or LifecyclePolicy(),
        retrieval=retrieval or RetrievalConfig(),
        default_vocabulary=vocabulary or DEFAULT_VOCABULARY,
        dedupe=load_policy(settings.dedupe_calibration) if settings.dedupe_calibration else None,
        given_vocabulary=None if vocabulary is None else (settings.tenant, vocabulary),
    )
    loop = Loop(engine, tenant=settings.tenant)
    loop.agent.configure(settings=settings)  # the learning agent's own model setting (`learning_model`)
    return loop


def open(
    db: str | None = None,
    *,
    vocabulary: Vocabulary | dict[str, str] | None = None,
    policy: LifecyclePolicy | None = None,
    retrieval: RetrievalConfig | None = None,
    **settings: Any,
) -> Loop:
    """Open a loop on `db` (a file path; default `learnloop.db` or `$LEARNLOOP_DB`) with the bundled local
    embedding model. Other settings (`embedder=`, `llm=`, `tenant=` …) override the environment.

    A `vocabulary` is stored in the database for the tenant (replacing the namespace's stored one when it
    differs), so a later `open(db)` without it keeps using it: the categories belong with the learnings."""
    resolved = Settings.from_env(db=db, **settings)
    return build_loop(resolved, vocabulary=vocabulary, policy=policy, retrieval=retrieval)
