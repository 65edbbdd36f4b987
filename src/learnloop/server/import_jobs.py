"""Imports over HTTP as jobs: the body is spooled to disk as it arrives (within the key's size and line limits),
then imported in the background, batch by batch, while `GET /api/import/{job}` reports progress.

A job's state is a small JSON file next to its spool in `<db>.imports/`, rewritten after every batch, so it
survives the process: a job whose process is gone reads as `interrupted` and `POST /api/import/{job}/resume`
carries on after its last committed line (lines already imported are skipped either way). Jobs run one at a
time per process and leave half their time to other requests (`ImportSettings.pause_share`), so an import of
millions of lines never freezes the service. Spools are deleted when their job is done; states after a week.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import tempfile
import time
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from fastapi import HTTPException
from pydantic import BaseModel, Field

from ..errors import NotFound
from ..importing import ImportReport, ImportSettings, file_lines
from ..loop import Loop
from .wire import discard

__all__ = ["DEFAULT_IMPORT_LIMITS", "ImportJob", "ImportJobs", "ImportLimit"]

log = logging.getLogger("learnloop.server")

JobStatus = Literal["queued", "running", "done", "failed", "interrupted"]
ImportLimit = tuple[int, int]  # (bytes, lines)
# Per key role: what one import may carry. A user's own notes are small; a tenant's migration is not.
DEFAULT_IMPORT_LIMITS: Mapping[str, ImportLimit] = {
    "admin": (64 * 1024 * 1024, 1_000_000),
    "app": (32 * 1024 * 1024, 250_000),
    "user": (8 * 1024 * 1024, 50_000),
}
_KEEP_SECONDS = 7 * 86_400
_WRITE_CHUNK = 1 << 20
_HOST = socket.gethostname()


class ImportJob(BaseModel):
    """An import's progress and outcome, as `GET /api/import/{job}` shows it."""

    job: str
    status: JobStatus
    user: str | None = Field(description="Whose learnings (none: as each line says, for tenant keys)")
    bytes: int
    lines: int = Field(description="Lines in the body")
    progress: float = Field(description="Share of the lines handled, 0..1")
    report: ImportReport = Field(description="Rows imported, skipped and rejected (with line numbers) so far")
    error: str | None = None
    created_at: datetime
    updated_at: datetime


class _Stored(ImportJob):
    """What the state file holds besides: who may see the job, and which process runs it."""

    tenant: str
    actor: str
    pid: int = 0
    host: str = ""

    def public(self) -> ImportJob:
        job = ImportJob.model_validate(self.model_dump(exclude={"tenant", "actor", "pid", "host"}))
        job.report = job.report.model_copy(update={"ids": {}})  # the id map can be huge; the client has none
        return job


def _now() -> datetime:
    return datetime.now(UTC)


def _alive(pid: int, host: str) -> bool:
    if host != _HOST:
        return True  # another machine's job: it says for itself
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ImportJobs:
    def __init__(self, folder: Path, settings: ImportSettings | None = None) -> None:
        self.folder = folder
        self.settings = settings or ImportSettings(pause_share=0.5)
        self._one_at_a_time = asyncio.Semaphore(1)
        self._tasks: dict[str, asyncio.Task[None]] = {}

    @classmethod
    def beside(cls, db_path: str) -> ImportJobs:
        """Jobs for the database at `db_path`, kept in `<db>.imports/` (a temporary folder for `:memory:` and for a
        database server's URL, which has no file to keep them beside)."""
        if db_path == ":memory:" or db_path.startswith("file:") or "://" in db_path:
            return cls(Path(tempfile.mkdtemp(prefix="learnloop-imports-")))
        return cls(Path(db_path + ".imports"))

    # -- files ---------------------------------------------------------------------------------------------

    def _state_path(self, job: str) -> Path:
        return self.folder / f"{job}.json"

    def _spool_path(self, job: str) -> Path:
        return self.folder / f"{job}.jsonl"

    def _save(self, state: _Stored) -> None:
        state.updated_at = _now()
        target = self._state_path(state.job)
        partial = target.with_suffix(".json.partial")
        partial.write_text(state.model_dump_json(), "utf-8")
        os.replace(partial, target)  # readers never see half a state

    def _load(self, job: str) -> _Stored | None:
        if not job.isalnum():
            return None
        try:
            return _Stored.model_validate_json(self._state_path(job).read_text("utf-8"))
        except (OSError, ValueError):
            return None

    def _prune(self) -> None:
        cutoff = time.time() - _KEEP_SECONDS
        for path in self.folder.glob("*.json"):
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    self._spool_path(path.stem).unlink(missing_ok=True)

    # -- creating ------------------------------------------------------------------------------------------

    async def spool(self, body: AsyncIterator[bytes], limit: ImportLimit) -> tuple[str, int, int]:
        """Write the body to a new spool file as it arrives; 413 (and no file) when it is over `limit`."""
        await asyncio.to_thread(self.folder.mkdir, parents=True, exist_ok=True)
        job = secrets.token_hex(8)
        path = self._spool_path(job)
        max_bytes, max_lines = limit
        size = lines = 0
        last = b"\n"
        buffer: list[bytes] = []
        handle = await asyncio.to_thread(path.open, "wb")
        try:
            async for chunk in body:
                size += len(chunk)
                lines += chunk.count(b"\n")
                if chunk:
                    last = chunk[-1:]
                if size > max_bytes:
                    raise HTTPException(413, f"the import is larger than this key may send ({max_bytes} bytes)")
                if lines > max_lines:
                    raise HTTPException(413, f"the import has more lines than this key may send ({max_lines})")
                buffer.append(chunk)
                if sum(map(len, buffer)) >= _WRITE_CHUNK:
                    await asyncio.to_thread(handle.write, b"".join(buffer))
                    buffer = []
            await asyncio.to_thread(handle.write, b"".join(buffer))
        except HTTPException:
            handle.close()
            path.unlink(missing_ok=True)
            await discard(body)  # so that the 413 reaches a client that is still sending
            raise
        except BaseException:
            handle.close()
            path.unlink(missing_ok=True)
            raise
        handle.close()
        return job, size, lines + (size > 0 and last != b"\n")

    def create(self, job: str, tenant: str, user: str | None, actor: str, size: int, lines: int) -> ImportJob:
        now = _now()
        state = _Stored(
            job=job,
            status="queued",
            user=user,
            bytes=size,
            lines=lines,
            progress=0.0 if lines else 1.0,
            report=ImportReport(),
            created_at=now,
            updated_at=now,
            tenant=tenant,
            actor=actor,
            pid=os.getpid(),
            host=_HOST,
        )
        self._save(state)
        self._prune()
        return state.public()

    # -- running -------------------------------------------------------------------------------------------

    def start(self, job: str, loop: Loop) -> None:
        """Run (or resume) `job` in the background of this process."""
        self._tasks[job] = asyncio.create_task(self._run(job, loop), name=f"learnloop-import-{job}")

    async def wait(self, job: str) -> None:
        task = self._tasks.get(job)
        if task is not None:
            await asyncio.shield(task)

    async def _run(self, job: str, loop: Loop) -> None:
        state = self._load(job)
        assert state is not None
        try:
            async with self._one_at_a_time:
                state.status, state.pid, state.host, state.error = "running", os.getpid(), _HOST, None
                self._save(state)

                earlier = state.report  # a resumed job goes on counting from where it stopped

                def persist(report: ImportReport) -> None:
                    state.report = report.after(earlier)
                    state.progress = min(1.0, report.last_line / state.lines) if state.lines else 1.0
                    self._save(state)

                report = await loop.for_tenant(state.tenant).import_jsonl(
                    file_lines(str(self._spool_path(job))),
                    user=state.user,
                    actor=state.actor,
                    start_line=state.report.last_line + 1,
                    settings=self.settings,
                    on_batch=persist,
                )
                persist(report)
                state.status, state.progress = "done", 1.0
                self._save(state)
                self._spool_path(job).unlink(missing_ok=True)
        except asyncio.CancelledError:
            state.status = "interrupted"
            self._save(state)
            raise
        except Exception as exc:
            log.exception("import job %s failed", job)
            state.status, state.error = "failed", f"the import stopped: {exc}"
            self._save(state)
        finally:
            self._tasks.pop(job, None)

    async def stop(self) -> None:
        """Cancel this process's jobs (on shutdown): they read as interrupted and can be resumed."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # -- reading -------------------------------------------------------------------------------------------

    def get(self, job: str, tenant: str, user: str | None) -> ImportJob:
        """The job, if `tenant` owns it and (for a user-bound key, `user` set) it is that user's; else 404."""
        state = self._visible(job, tenant, user)
        return state.public()

    def resumable(self, job: str, tenant: str, user: str | None) -> None:
        state = self._visible(job, tenant, user)
        if state.status not in ("interrupted", "failed") or not self._spool_path(job).exists():
            raise HTTPException(409, f"import {job} is {state.status}; only an interrupted or failed one resumes")
        state.status = "queued"
        self._save(state)

    def _visible(self, job: str, tenant: str, user: str | None) -> _Stored:
        state = self._load(job)
        if state is None or state.tenant != tenant or (user is not None and state.user != user):
            raise NotFound(f"import {job} not found", job=job)
        running_elsewhere = state.status in ("queued", "running") and job not in self._tasks
        if running_elsewhere and not _alive(state.pid, state.host):
            state.status = "interrupted"
        return state
