-- One row per turn of the main agent taken through `loop.turn()` / `POST /api/turns` (seed 001 §7): the
-- conversation record (message and response under the write gate's redact policy, tool calls as JSON, channel)
-- and the turn's state. `open` until the app finishes it (or it expires: `abandoned`); `finished` queues the
-- turn's background work durably; `done` when every step of that work has run. `steps` records the steps done,
-- so work resumed after a crash does not repeat them. A claim is a lease: `claimed_at` is when it (or the wait before a retry) ends.
-- `silence` is 0 until housekeeping decides: 1 no follow-up within the window (the turn got the no-reply
-- score), 2 followed up in time.
CREATE TABLE conversations (
    tenant         TEXT    NOT NULL,
    id             TEXT    NOT NULL,
    user_id        TEXT    NOT NULL DEFAULT '',
    session        TEXT    NOT NULL,
    channel        TEXT    NOT NULL DEFAULT '',
    status         TEXT    NOT NULL CHECK (status IN ('open', 'finished', 'done', 'abandoned')),
    message        TEXT    NOT NULL,
    response       TEXT,
    context        TEXT    NOT NULL DEFAULT '{}',
    tool_calls     TEXT    NOT NULL DEFAULT '[]',
    meta           TEXT    NOT NULL DEFAULT '{}',
    steps          TEXT    NOT NULL DEFAULT '{}',
    started_at     REAL    NOT NULL,
    finished_at    REAL,
    expires_at     REAL    NOT NULL,
    claimed_by     TEXT,
    claimed_at     REAL,
    attempts       INTEGER NOT NULL DEFAULT 0,
    error          TEXT,
    feedback_type  TEXT,
    feedback_score REAL,
    silence        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, id)
);

CREATE INDEX conversations_by_session ON conversations (tenant, user_id, session, started_at);
CREATE INDEX conversations_pending ON conversations (status, started_at) WHERE status IN ('open', 'finished');
CREATE INDEX conversations_silence ON conversations (finished_at) WHERE status = 'done' AND silence = 0;
