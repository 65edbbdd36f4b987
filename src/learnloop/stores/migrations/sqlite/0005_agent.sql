-- The background learning agent (seed 003): sessions, the durable interaction queue, the agent's own
-- conversation per session, the ledger of applied effects, experience files and the default document
-- knowledge base. user_id '' marks rows shared by the whole tenant. Every table here has (tenant, user_id)
-- and is listed in AGENT_USER_TABLES (SQLiteStore.user_tables), so forgetting a user deletes their rows.

-- One row per session of the main agent. `shared` = 1: the session's learning agent curates the tenant's
-- experience files and knowledge (user_id '') of the project instead of the user's own.
CREATE TABLE agent_sessions (
    tenant     TEXT    NOT NULL,
    session    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL DEFAULT '',
    project    TEXT    NOT NULL,
    shared     INTEGER NOT NULL DEFAULT 0,
    status     TEXT    NOT NULL CHECK (status IN ('open', 'closed')),
    created_at REAL    NOT NULL,
    closed_at  REAL,
    PRIMARY KEY (tenant, session)
);

CREATE INDEX agent_sessions_open ON agent_sessions (tenant, session) WHERE status = 'open';

-- Interaction packages, consumed in id order per session. A claim is a lease: `claimed_by` names the
-- process (host:pid:token) and `claimed_at` is renewed while it works, so the job of a killed worker is
-- taken over once the process is gone or the lease has run out.
CREATE TABLE agent_queue (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant      TEXT    NOT NULL,
    user_id     TEXT    NOT NULL DEFAULT '',
    session     TEXT    NOT NULL,
    package_id  TEXT    NOT NULL,
    turn        INTEGER NOT NULL,
    body        TEXT    NOT NULL,
    status      TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'claimed', 'done', 'failed')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    not_before  REAL    NOT NULL DEFAULT 0,
    claimed_at  REAL,
    claimed_by  TEXT,
    error       TEXT,
    created_at  REAL    NOT NULL,
    finished_at REAL,
    UNIQUE (tenant, package_id)
);

CREATE INDEX agent_queue_unfinished ON agent_queue (tenant, session, id) WHERE status IN ('pending', 'claimed');
CREATE INDEX agent_queue_turns ON agent_queue (tenant, session, turn);

-- The learning agent's own conversation per session, trimmed to a token budget by whole packages.
CREATE TABLE agent_messages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant     TEXT    NOT NULL,
    user_id    TEXT    NOT NULL DEFAULT '',
    session    TEXT    NOT NULL,
    package_id TEXT    NOT NULL,
    role       TEXT    NOT NULL,
    body       TEXT    NOT NULL,
    tokens     INTEGER NOT NULL,
    created_at REAL    NOT NULL
);

CREATE INDEX agent_messages_by_session ON agent_messages (tenant, session, id);

-- Step `step` of package `package_id` has been applied; its result is replayed, never re-applied, when the
-- package is retried. Written in the same transaction as the step's effect and its tool message.
CREATE TABLE agent_effects (
    tenant      TEXT    NOT NULL,
    user_id     TEXT    NOT NULL DEFAULT '',
    package_id  TEXT    NOT NULL,
    step        INTEGER NOT NULL,
    tool        TEXT    NOT NULL,
    call_digest TEXT    NOT NULL,
    result      TEXT    NOT NULL,
    at          REAL    NOT NULL,
    PRIMARY KEY (tenant, package_id, step)
);

-- Experience: small Markdown files per project, indexed by routing_rules.md. Last write wins.
CREATE TABLE agent_experience_files (
    tenant             TEXT NOT NULL,
    user_id            TEXT NOT NULL DEFAULT '',
    project            TEXT NOT NULL,
    path               TEXT NOT NULL,
    content            TEXT NOT NULL,
    updated_by_session TEXT,
    created_at         REAL NOT NULL,
    updated_at         REAL NOT NULL,
    PRIMARY KEY (tenant, user_id, project, path)
);

-- The default knowledge base: pages (documents) and pointers (regions or entries of a page) with
-- descriptions, cross references and, for pointers, an embedding of title and description.
CREATE TABLE agent_knowledge_pages (
    tenant           TEXT NOT NULL,
    user_id          TEXT NOT NULL DEFAULT '',
    project          TEXT NOT NULL,
    page_id          TEXT NOT NULL,
    title            TEXT NOT NULL,
    content          TEXT NOT NULL DEFAULT '',
    kind             TEXT NOT NULL DEFAULT '',
    cross_references TEXT NOT NULL DEFAULT '[]',
    metadata         TEXT NOT NULL DEFAULT '{}',
    created_at       REAL NOT NULL,
    updated_at       REAL NOT NULL,
    PRIMARY KEY (tenant, user_id, project, page_id)
);

CREATE TABLE agent_knowledge_pointers (
    tenant           TEXT NOT NULL,
    user_id          TEXT NOT NULL DEFAULT '',
    project          TEXT NOT NULL,
    pointer_id       TEXT NOT NULL,
    page_id          TEXT,
    title            TEXT NOT NULL,
    description      TEXT NOT NULL DEFAULT '',
    cross_references TEXT NOT NULL DEFAULT '[]',
    metadata         TEXT NOT NULL DEFAULT '{}',
    embedding        BLOB,
    embedding_model  TEXT,
    created_at       REAL NOT NULL,
    updated_at       REAL NOT NULL,
    PRIMARY KEY (tenant, user_id, project, pointer_id)
);

CREATE INDEX agent_knowledge_pointers_by_page ON agent_knowledge_pointers (tenant, project, page_id);
