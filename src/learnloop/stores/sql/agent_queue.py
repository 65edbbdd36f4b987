"""Sessions and the interaction queue of the learning agent, as SQL run on the store's executor thread.

Claims are transactional: one claim reads the oldest unfinished package of a session and marks it claimed, so
two workers (in one process or several) never hold the same package, and a session's packages are handled
strictly in order. A claim looks with a plain read first and opens a transaction only when there is a package
to take, so idle workers never write. On SQLite the transaction holds the database's writer lock (BEGIN
IMMEDIATE); on PostgreSQL it takes only the session's row (SELECT … FOR UPDATE SKIP LOCKED): claims in other
sessions and the database's other writers go on meanwhile, and a worker that finds the session being claimed
by another asks again shortly. The lock is on the session, never the package: skipping a locked package would
hand out the next one while the first is still held, out of order.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ...agent.records import AgentSession, Job, QueueCounts, QueuedInteraction, SessionGone, SessionStatus
from ...errors import ConflictError, NotFound
from ...models import Scope
from ..agent_claims import Claim, waiting
from ..sql.rows import from_ts
from .dialect import Connection, dialect_of
from .transactions import write_transaction

__all__ = [
    "Claim",
    "claim",
    "close_session",
    "enqueue",
    "get_session",
    "list_sessions",
    "open_session",
    "queue_counts",
    "release",
    "renew",
    "require_session",
    "retry_later",
    "session_from_row",
    "sessions_with_work",
]

SESSION_COLUMNS = "tenant, session, user_id, project, shared, status, created_at, closed_at"


def session_from_row(row: tuple[Any, ...]) -> AgentSession:
    tenant, session, user_id, project, shared, status, created_at, closed_at = row
    return AgentSession(
        tenant=tenant,
        session=session,
        user=user_id or None,
        project=project,
        shared=bool(shared),
        status=status,
        created_at=datetime.fromtimestamp(created_at, UTC),
        closed_at=from_ts(closed_at),
    )


def _session_row(conn: Connection, tenant: str, session: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM agent_sessions WHERE tenant = ? AND session = ?", (tenant, session)
    ).fetchone()
    return row


def _visible(scope: Scope, row: tuple[Any, ...] | None) -> bool:
    return row is not None and (scope.user is None or row[2] == scope.user)


def get_session(conn: Connection, scope: Scope, session: str) -> AgentSession | None:
    row = _session_row(conn, scope.tenant, session)
    return session_from_row(row) if row is not None and _visible(scope, row) else None


def _insert_session(conn: Connection, scope: Scope, session: str, project: str, shared: bool, now: float) -> None:
    conn.execute(
        "INSERT INTO agent_sessions (tenant, session, user_id, project, shared, status, created_at) "
        "VALUES (?, ?, ?, ?, ?, 'open', ?)",
        (scope.tenant, session, scope.user or "", project, int(shared), now),
    )


def open_session(
    conn: Connection,
    scope: Scope,
    session: str,
    project: str | None,
    shared: bool | None,
    default_project: str,
    now: float,
) -> AgentSession:
    """Open (or reopen) a session. `project` and `shared` None keep what an existing session has."""
    with write_transaction(conn):
        row = _session_row(conn, scope.tenant, session)
        if row is None:
            _insert_session(conn, scope, session, project or default_project, bool(shared), now)
        else:
            if row[2] != (scope.user or ""):
                # Someone else's session id: reported as a clash, never as a view of their session.
                raise ConflictError(f"session {session!r} exists for another user", session=session)
            if (project is not None and project != row[3]) or (shared is not None and shared != bool(row[4])):
                raise ConflictError(
                    f"session {session!r} is open on project {row[3]!r} (shared={bool(row[4])})", session=session
                )
            if row[5] == "open":
                return session_from_row(row)
            conn.execute(
                "UPDATE agent_sessions SET status = 'open', closed_at = NULL WHERE tenant = ? AND session = ?",
                (scope.tenant, session),
            )
        found = _session_row(conn, scope.tenant, session)
    assert found is not None
    return session_from_row(found)


def close_session(conn: Connection, scope: Scope, session: str, now: float) -> AgentSession:
    with write_transaction(conn):
        row = _session_row(conn, scope.tenant, session)
        if not _visible(scope, row):
            raise NotFound(f"session {session!r} not found", session=session)
        conn.execute(
            "UPDATE agent_sessions SET status = 'closed', closed_at = COALESCE(closed_at, ?) "
            "WHERE tenant = ? AND session = ?",
            (now, scope.tenant, session),
        )
        found = _session_row(conn, scope.tenant, session)
    assert found is not None
    return session_from_row(found)


def list_sessions(conn: Connection, scope: Scope | None, status: SessionStatus | None) -> list[AgentSession]:
    """Sessions of a scope, or of every tenant (`scope` None: what a restarted process rehydrates)."""
    where: list[str] = []
    params: list[Any] = []
    if scope is not None:
        where.append("tenant = ?")
        params.append(scope.tenant)
        if scope.user is not None:
            where.append("user_id = ?")
            params.append(scope.user)
    if status is not None:
        where.append("status = ?")
        params.append(status)
    sql = f"SELECT {SESSION_COLUMNS} FROM agent_sessions"
    if where:
        sql += " WHERE " + " AND ".join(where)
    rows = conn.execute(sql + " ORDER BY tenant, created_at, session", params).fetchall()
    return [session_from_row(r) for r in rows]


def enqueue(
    conn: Connection,
    scope: Scope,
    session: str,
    package_id: str,
    turn: int | None,
    body: str,
    project: str,
    now: float,
) -> QueuedInteraction:
    """Queue a package in one transaction, opening the session if it does not exist yet. A package id seen
    before is not queued again (`duplicate`); a closed session refuses packages (ConflictError)."""
    with write_transaction(conn):
        row = _session_row(conn, scope.tenant, session)
        if row is None:
            _insert_session(conn, scope, session, project, False, now)
            owner = scope.user or ""
        elif not _visible(scope, row):
            raise NotFound(f"session {session!r} not found", session=session)
        elif row[5] != "open":
            raise ConflictError(f"session {session!r} is closed; open it again to queue interactions")
        else:
            owner = row[2]
        if turn is None:
            turn = conn.execute(
                "SELECT COALESCE(MAX(turn), 0) + 1 FROM agent_queue WHERE tenant = ? AND session = ?",
                (scope.tenant, session),
            ).fetchone()[0]
        inserted = conn.execute(
            "INSERT INTO agent_queue (tenant, user_id, session, package_id, turn, body, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, package_id) DO NOTHING RETURNING id",
            (scope.tenant, owner, session, package_id, turn, body, now),
        ).fetchone()
        if inserted is not None:
            return QueuedInteraction(id=inserted[0], package_id=package_id, session=session, turn=turn)
        existing = conn.execute(
            "SELECT id, session, turn, status, user_id FROM agent_queue WHERE tenant = ? AND package_id = ?",
            (scope.tenant, package_id),
        ).fetchone()
    if existing[1] != session or (scope.user is not None and existing[4] != scope.user):
        raise ConflictError(f"package id {package_id!r} was already used", package_id=package_id)
    return QueuedInteraction(
        id=existing[0], package_id=package_id, session=session, turn=existing[2], duplicate=True, status=existing[3]
    )


# A claim that found its session being claimed by another worker asks again after this many seconds.
_CLAIMING_ELSEWHERE = 0.05
_SESSION_STATUS = "SELECT status FROM agent_sessions WHERE tenant = ? AND session = ?"


def _next(
    conn: Connection, tenant: str, session: str, now: float, lease: float, *, lock: bool = False
) -> tuple[Claim | None, tuple[Any, ...] | None]:
    """What a claim finds: an answer that claims nothing (closed, idle, wait), or the queue row to claim.
    `lock` (inside the claim's transaction) first takes the session's row, or answers 'ask again' when
    another claim holds it."""
    state = conn.execute(_SESSION_STATUS + (dialect_of(conn).skip_locked if lock else ""), (tenant, session)).fetchone()
    if state is None and lock:
        state = conn.execute(_SESSION_STATUS, (tenant, session)).fetchone()
        if state is not None and state[0] == "open":
            return Claim(retry_in=_CLAIMING_ELSEWHERE), None
    if state is None or state[0] != "open":
        return Claim(closed=True), None
    # A plain read under the session's lock: a package its holder is finishing reads as still claimed (wait).
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT id, user_id, package_id, turn, body, status, attempts, not_before, claimed_at, claimed_by "
        "FROM agent_queue WHERE tenant = ? AND session = ? AND status IN ('pending', 'claimed') "
        "ORDER BY id LIMIT 1",
        (tenant, session),
    ).fetchone()
    if row is None:
        return Claim(), None
    wait = waiting(row[5], row[7], row[8], row[9], now, lease)
    return (wait, None) if wait is not None else (None, row)


def claim(conn: Connection, tenant: str, session: str, claimer: str, now: float, lease: float) -> Claim:
    # Look first without the write lock: an idle session's worker asks every poll, and taking BEGIN IMMEDIATE
    # only to find nothing would queue every poll behind (and in front of) the database's real writers.
    answer, _ = _next(conn, tenant, session, now, lease)
    if answer is not None:
        return answer
    with write_transaction(conn, ordered=False):
        # Again under the lock: another worker may have claimed the package since the look.
        answer, row = _next(conn, tenant, session, now, lease, lock=True)
        if answer is not None:
            return answer
        assert row is not None
        job_id, user_id, package_id, turn, body, _, attempts = row[:7]
        conn.execute(
            "UPDATE agent_queue SET status = 'claimed', attempts = attempts + 1, claimed_at = ?, claimed_by = ? "
            "WHERE id = ?",
            (now, claimer, job_id),
        )
    job = Job(
        id=job_id,
        tenant=tenant,
        user=user_id or None,
        session=session,
        package_id=package_id,
        turn=turn,
        body=body,
        attempts=attempts + 1,
        claimed_by=claimer,
    )
    return Claim(job=job)


def sessions_with_work(conn: Connection) -> list[tuple[str, str]]:
    """Open sessions of every tenant with a package pending or claimed: the ones that need a worker. Reads
    only the partial index of unfinished packages, so its cost follows the work waiting, not the sessions."""
    rows = conn.execute(
        "SELECT DISTINCT q.tenant, q.session FROM agent_queue AS q JOIN agent_sessions AS s "
        "ON s.tenant = q.tenant AND s.session = q.session "
        "WHERE q.status IN ('pending', 'claimed') AND s.status = 'open' ORDER BY q.tenant, q.session"
    ).fetchall()
    return [(tenant, session) for tenant, session in rows]


def require_session(conn: Connection, tenant: str, session: str, user: str | None) -> None:
    """SessionGone unless the session still exists for `user` (forgetting the user deletes it). Called inside
    the transaction of a worker's write, so nothing lands after the forget has committed."""
    found = conn.execute(
        "SELECT 1 FROM agent_sessions WHERE tenant = ? AND session = ? AND user_id = ?",
        (tenant, session, user or ""),
    ).fetchone()
    if found is None:
        raise SessionGone(f"session {session!r} no longer exists", session=session)


def renew(conn: Connection, job_id: int, claimer: str, now: float) -> bool:
    with write_transaction(conn, ordered=False):
        cursor = conn.execute(
            "UPDATE agent_queue SET claimed_at = ? WHERE id = ? AND claimed_by = ? AND status = 'claimed'",
            (now, job_id, claimer),
        )
    return cursor.rowcount == 1


def retry_later(conn: Connection, job_id: int, claimer: str, error: str, not_before: float) -> bool:
    with write_transaction(conn, ordered=False):
        cursor = conn.execute(
            "UPDATE agent_queue SET status = 'pending', error = ?, not_before = ?, claimed_at = NULL, "
            "claimed_by = NULL WHERE id = ? AND claimed_by = ? AND status = 'claimed'",
            (error, not_before, job_id, claimer),
        )
    return cursor.rowcount == 1


def release(conn: Connection, job_id: int, claimer: str) -> bool:
    """Give a job back untouched (the worker was stopped, not the package's fault): no attempt is counted."""
    with write_transaction(conn, ordered=False):
        cursor = conn.execute(
            f"UPDATE agent_queue SET status = 'pending', attempts = {dialect_of(conn).greatest}(attempts - 1, 0), "
            "claimed_at = NULL, "
            "claimed_by = NULL WHERE id = ? AND claimed_by = ? AND status = 'claimed'",
            (job_id, claimer),
        )
    return cursor.rowcount == 1


def queue_counts(conn: Connection, scope: Scope, session: str | None) -> QueueCounts:
    where, params = ["tenant = ?"], [scope.tenant]
    if scope.user is not None:
        where.append("user_id = ?")
        params.append(scope.user)
    if session is not None:
        where.append("session = ?")
        params.append(session)
    rows = conn.execute(
        f"SELECT status, COUNT(*) FROM agent_queue WHERE {' AND '.join(where)} GROUP BY status", params
    ).fetchall()
    return QueueCounts(**{status: count for status, count in rows})
