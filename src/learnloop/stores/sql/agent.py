"""`AgentStore` on the learnings' database: same connection, same executor thread, same transactions.

The store's `agent` hands out the one instance bound to a store. Every method runs as a job on the store's
single executor thread (`SqlStore._run`), so a queued package, a tool step's effect, its ledger entry and
its events commit together, and events land in the same log as every other change.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

from ...agent.records import (
    AgentSession,
    ExperienceChange,
    ExperienceFile,
    ExperienceFileInfo,
    ExperienceOp,
    Job,
    KnowledgePage,
    KnowledgePointer,
    QueueCounts,
    QueuedInteraction,
    SessionStatus,
    StepCommit,
    StepRecord,
    StoredMessage,
    Workspace,
)
from ...llms.base import Message
from ...models import Event, Scope
from ..base import AppendEvent, EventDraft, Vector
from ..sql.writes import apply_operations
from . import agent_content as content
from . import agent_queue as queue
from .dialect import Connection
from .jobs import ConnectionJobs
from .transactions import read_transaction, write_transaction

__all__ = ["AGENT_USER_TABLES", "SqlAgentStore"]

T = TypeVar("T")
log = logging.getLogger("learnloop.agent")

# Tables holding a user's rows; the store's `forget_user` deletes them.
AGENT_USER_TABLES = (
    "agent_sessions",
    "agent_queue",
    "agent_messages",
    "agent_effects",
    "agent_experience_files",
    "agent_knowledge_pages",
    "agent_knowledge_pointers",
)


def _events(
    conn: Connection, tenant: str, user: str | None, drafts: Sequence[EventDraft], now: datetime
) -> list[Event]:
    ops = [AppendEvent(event=draft, user=user) for draft in drafts]
    return apply_operations(conn, Scope(tenant=tenant, user=user), ops, now)[1]


class SqlAgentStore:
    def __init__(self, store: ConnectionJobs) -> None:
        self._store = store

    def __repr__(self) -> str:
        return f"SqlAgentStore({self._store.path!r})"

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        return await self._store._run(fn, *args)

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(conn, *args)` inside one write transaction."""

        def job(conn: Connection) -> T:
            with write_transaction(conn):
                return fn(conn, *args)

        return await self._run(job)

    @property
    def embedding_model(self) -> str:
        return self._store.embedding_model

    # -- sessions ------------------------------------------------------------------------------------

    async def open_session(
        self, scope: Scope, session: str, project: str | None, shared: bool | None, default_project: str, now: datetime
    ) -> AgentSession:
        return await self._run(queue.open_session, scope, session, project, shared, default_project, now.timestamp())

    async def close_session(self, scope: Scope, session: str, now: datetime) -> AgentSession:
        return await self._run(queue.close_session, scope, session, now.timestamp())

    async def get_session(self, scope: Scope, session: str) -> AgentSession | None:
        return await self._run(queue.get_session, scope, session)

    async def list_sessions(self, scope: Scope | None, status: SessionStatus | None = None) -> list[AgentSession]:
        return await self._run(queue.list_sessions, scope, status)

    # -- queue ---------------------------------------------------------------------------------------

    async def enqueue(
        self,
        scope: Scope,
        session: str,
        package_id: str,
        turn: int | None,
        body: str,
        default_project: str,
        now: datetime,
    ) -> QueuedInteraction:
        return await self._run(queue.enqueue, scope, session, package_id, turn, body, default_project, now.timestamp())

    async def claim(self, tenant: str, session: str, claimer: str, now: datetime, lease: float) -> queue.Claim:
        return await self._run(queue.claim, tenant, session, claimer, now.timestamp(), lease)

    async def renew(self, job: Job, now: datetime) -> bool:
        return await self._run(queue.renew, job.id, job.claimed_by, now.timestamp())

    async def retry_later(self, job: Job, error: str, not_before: datetime) -> bool:
        return await self._run(queue.retry_later, job.id, job.claimed_by, error, not_before.timestamp())

    async def release(self, job: Job) -> bool:
        return await self._run(queue.release, job.id, job.claimed_by)

    async def queue_counts(self, scope: Scope, session: str | None = None) -> QueueCounts:
        return await self._run(queue.queue_counts, scope, session)

    async def sessions_with_work(self) -> list[tuple[str, str]]:
        return await self._run(queue.sessions_with_work)

    async def finish(
        self, job: Job, *, failed: bool, error: str | None, event: EventDraft, budget_tokens: int, now: datetime
    ) -> list[Event]:
        """Mark a claimed job done (or failed for good), trim the conversation and log `event`, at once.
        Nothing happens (and no event) if the claim was lost to another worker."""
        return await self._run(self._finish, job, failed, error, event, budget_tokens, now)

    def _finish(
        self,
        conn: Connection,
        job: Job,
        failed: bool,
        error: str | None,
        event: EventDraft,
        budget_tokens: int,
        now: datetime,
    ) -> list[Event]:
        with write_transaction(conn):
            cursor = conn.execute(
                "UPDATE agent_queue SET status = ?, error = ?, finished_at = ?, claimed_at = NULL "
                "WHERE id = ? AND claimed_by = ? AND status = 'claimed'",
                ("failed" if failed else "done", error, now.timestamp(), job.id, job.claimed_by),
            )
            if cursor.rowcount != 1:
                return []
            self._trim(conn, job.tenant, job.session, budget_tokens)
            return _events(conn, job.tenant, job.user, [event], now)

    @staticmethod
    def _trim(conn: Connection, tenant: str, session: str, budget_tokens: int) -> None:
        """Drop whole packages of the conversation, oldest first, until it fits the budget (the latest stays)."""
        groups = conn.execute(
            "SELECT MIN(id), SUM(tokens) FROM agent_messages WHERE tenant = ? AND session = ? "
            "GROUP BY package_id ORDER BY MIN(id) DESC",
            (tenant, session),
        ).fetchall()
        total = 0
        for index, (_, tokens) in enumerate(groups):
            total += tokens
            if index > 0 and total > budget_tokens:
                conn.execute(
                    "DELETE FROM agent_messages WHERE tenant = ? AND session = ? AND id < ?",
                    (tenant, session, groups[index - 1][0]),
                )
                return

    # -- the agent's conversation and the ledger -----------------------------------------------------

    async def messages(self, tenant: str, session: str) -> list[StoredMessage]:
        return await self._run(self._messages, tenant, session)

    def _messages(self, conn: Connection, tenant: str, session: str) -> list[StoredMessage]:
        rows = conn.execute(
            "SELECT id, package_id, body, tokens FROM agent_messages WHERE tenant = ? AND session = ? ORDER BY id",
            (tenant, session),
        ).fetchall()
        return [StoredMessage(r[0], r[1], Message.model_validate_json(r[2]), r[3]) for r in rows]

    async def append_message(self, job: Job, message: Message, tokens: int, now: datetime) -> StoredMessage:
        """SessionGone (nothing written) if the job's session was deleted meanwhile (its user forgotten)."""

        def append(conn: Connection) -> StoredMessage:
            queue.require_session(conn, job.tenant, job.session, job.user)
            return self._append_message(conn, job.tenant, job.user, job.session, job.package_id, message, tokens, now)

        return await self._write(append)

    @staticmethod
    def _append_message(
        conn: Connection,
        tenant: str,
        user: str | None,
        session: str,
        package_id: str,
        message: Message,
        tokens: int,
        now: datetime,
    ) -> StoredMessage:
        cursor = conn.execute(
            "INSERT INTO agent_messages (tenant, user_id, session, package_id, role, body, tokens, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (tenant, user or "", session, package_id, message.role, message.model_dump_json(), tokens, now.timestamp()),
        )
        return StoredMessage(cursor.fetchone()[0], package_id, message, tokens)

    async def steps(self, tenant: str, package_id: str) -> dict[int, StepRecord]:
        return await self._run(self._steps, tenant, package_id)

    def _steps(self, conn: Connection, tenant: str, package_id: str) -> dict[int, StepRecord]:
        rows = conn.execute(
            "SELECT step, tool, call_digest, result FROM agent_effects WHERE tenant = ? AND package_id = ?",
            (tenant, package_id),
        ).fetchall()
        return {r[0]: StepRecord(r[0], r[1], r[2], json.loads(r[3])) for r in rows}

    async def commit_step(
        self, commit: StepCommit, message: Callable[[dict[str, Any]], tuple[Message, int]], now: datetime
    ) -> tuple[dict[str, Any], list[Event], bool]:
        """Apply a step once: effect, ledger entry, tool message (built by `message` from the final result)
        and events in one transaction. A step already in the ledger is replayed: its recorded result, no
        effect, no events (`True` as the third value). SessionGone (nothing written) if the session was
        deleted meanwhile: a forgotten user's rows must not come back from a worker still busy for them."""
        return await self._run(self._commit_step, commit, message, now)

    def _commit_step(
        self,
        conn: Connection,
        commit: StepCommit,
        message: Callable[[dict[str, Any]], tuple[Message, int]],
        now: datetime,
    ) -> tuple[dict[str, Any], list[Event], bool]:
        with write_transaction(conn):
            queue.require_session(conn, commit.tenant, commit.session, commit.user)
            done = conn.execute(
                "SELECT result, call_digest FROM agent_effects WHERE tenant = ? AND package_id = ? AND step = ?",
                (commit.tenant, commit.package_id, commit.step),
            ).fetchone()
            if done is not None:
                # Applied by an earlier attempt: answer this call with the recorded result, apply nothing.
                if done[1] != commit.call_digest:
                    log.warning(
                        "learning agent: step %d of package %s was applied for a different call; not applying %s",
                        commit.step,
                        commit.package_id,
                        commit.tool,
                    )
                recorded: dict[str, Any] = json.loads(done[0])
                tool_message, tokens = message(recorded)
                self._append_message(
                    conn, commit.tenant, commit.user, commit.session, commit.package_id, tool_message, tokens, now
                )
                return recorded, [], True
            result = dict(commit.result)
            drafts = list(commit.events)
            if commit.effect is not None:
                facts = content.apply_experience(conn, commit.effect, now.timestamp()).facts()
                result |= facts
                drafts = [replace(d, data=d.data | facts) for d in drafts]
            conn.execute(
                "INSERT INTO agent_effects (tenant, user_id, package_id, step, tool, call_digest, result, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    commit.tenant,
                    commit.user or "",
                    commit.package_id,
                    commit.step,
                    commit.tool,
                    commit.call_digest,
                    json.dumps(result, default=str),
                    now.timestamp(),
                ),
            )
            tool_message, tokens = message(result)
            self._append_message(
                conn, commit.tenant, commit.user, commit.session, commit.package_id, tool_message, tokens, now
            )
            return result, _events(conn, commit.tenant, commit.user, drafts, now), False

    # -- experience files ----------------------------------------------------------------------------

    async def read_file(self, workspace: Workspace, path: str) -> ExperienceFile | None:
        return await self._run(content.read_file, workspace, path)

    async def read_files(self, workspace: Workspace, paths: Sequence[str]) -> list[ExperienceFile]:
        def job(conn: Connection) -> list[ExperienceFile]:
            with read_transaction(conn):
                found = [content.read_file(conn, workspace, path) for path in paths]
            return [f for f in found if f is not None]

        return await self._run(job)

    async def list_files(self, workspace: Workspace) -> list[ExperienceFileInfo]:
        return await self._run(content.list_files, workspace)

    async def change_file(
        self, op: ExperienceOp, event_user: str | None, event: EventDraft, now: datetime
    ) -> tuple[ExperienceChange, list[Event]]:
        """A write or edit outside a package (an admin's), with its event."""

        def job(conn: Connection) -> tuple[ExperienceChange, list[Event]]:
            change = content.apply_experience(conn, op, now.timestamp())
            draft = replace(event, data=event.data | change.facts())
            return change, _events(conn, op.workspace.tenant, event_user, [draft], now)

        return await self._write(job)

    async def delete_file(self, workspace: Workspace, path: str) -> bool:
        return await self._write(content.delete_file, workspace, path)

    # -- knowledge base ------------------------------------------------------------------------------

    async def put_page(self, workspace: Workspace, page: KnowledgePage, now: datetime) -> KnowledgePage:
        return await self._write(content.put_page, workspace, page, now.timestamp())

    async def put_pointer(
        self, workspace: Workspace, pointer: KnowledgePointer, vector: Vector | None, now: datetime
    ) -> KnowledgePointer:
        model = self.embedding_model if vector is not None else None
        return await self._write(content.put_pointer, workspace, pointer, vector, model, now.timestamp())

    async def get_page(self, workspace: Workspace, page_id: str, *, visible: bool = True) -> KnowledgePage | None:
        return await self._run(lambda conn: content.get_page(conn, workspace, page_id, visible=visible))

    async def get_pointer(
        self, workspace: Workspace, pointer_id: str, *, visible: bool = True
    ) -> KnowledgePointer | None:
        return await self._run(lambda conn: content.get_pointer(conn, workspace, pointer_id, visible=visible))

    async def list_pages(self, workspace: Workspace, *, limit: int = 100, offset: int = 0) -> list[KnowledgePage]:
        return await self._run(content.list_pages, workspace, limit, offset)

    async def list_pointers(
        self, workspace: Workspace, *, page_id: str | None = None, limit: int = 100, offset: int = 0
    ) -> list[KnowledgePointer]:
        return await self._run(content.list_pointers, workspace, page_id, limit, offset)

    async def pointer_vectors(self, workspace: Workspace) -> tuple[list[KnowledgePointer], Vector | None]:
        return await self._run(content.pointer_vectors, workspace, self.embedding_model)

    async def update_knowledge(
        self,
        workspace: Workspace,
        target: str,
        item_id: str,
        changes: dict[str, Any],
        vector: Vector | None,
        now: datetime,
    ) -> None:
        model = self.embedding_model if vector is not None else None
        await self._write(content.update_knowledge, workspace, target, item_id, changes, vector, model, now.timestamp())

    async def delete_knowledge(self, workspace: Workspace, target: str, item_id: str) -> bool:
        return await self._write(content.delete_knowledge, workspace, target, item_id)
