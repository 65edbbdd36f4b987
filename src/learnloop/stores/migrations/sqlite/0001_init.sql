-- learnloop SQLite schema, version 1.
-- user_id '' marks a tenant-global learning (visible to every user of the tenant).

CREATE TABLE learnings (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant             TEXT    NOT NULL,
    user_id            TEXT    NOT NULL DEFAULT '',
    namespace          TEXT    NOT NULL,
    category           TEXT,
    type               TEXT    NOT NULL,
    text               TEXT    NOT NULL,
    topic              TEXT    NOT NULL DEFAULT '',
    tags               TEXT    NOT NULL DEFAULT '[]',
    status             TEXT    NOT NULL CHECK (status IN ('candidate', 'verified', 'deprecated')),
    confidence         REAL    NOT NULL,
    hits               INTEGER NOT NULL DEFAULT 0,
    streak             INTEGER NOT NULL DEFAULT 0,
    failures           INTEGER NOT NULL DEFAULT 0,
    version            INTEGER NOT NULL DEFAULT 1,
    revision           INTEGER NOT NULL DEFAULT 1,
    supersedes         INTEGER,
    simhash64          TEXT    NOT NULL,
    origin             TEXT    NOT NULL,
    source_session     TEXT,
    source_message     TEXT,
    source_interaction TEXT,
    source_context     TEXT,
    source_author      TEXT,
    created_at         REAL    NOT NULL,
    updated_at         REAL    NOT NULL,
    last_retrieved_at  REAL,
    embedding          BLOB,
    embedding_model    TEXT,
    scope_token        TEXT    NOT NULL
);

CREATE INDEX learnings_by_owner   ON learnings (tenant, user_id, created_at DESC);
CREATE INDEX learnings_by_status  ON learnings (tenant, status, updated_at);
CREATE INDEX learnings_by_session ON learnings (tenant, source_session);

-- Full-text index over the learning text, topic and tags. `scope_token` is a hash of (tenant, user) so a
-- search can be restricted to one scope inside the index instead of after it.
CREATE VIRTUAL TABLE learnings_fts USING fts5(
    text, topic, tags, scope_token,
    content = 'learnings', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER learnings_fts_insert AFTER INSERT ON learnings BEGIN
    INSERT INTO learnings_fts (rowid, text, topic, tags, scope_token)
    VALUES (new.id, new.text, new.topic, new.tags, new.scope_token);
END;

CREATE TRIGGER learnings_fts_delete AFTER DELETE ON learnings BEGIN
    INSERT INTO learnings_fts (learnings_fts, rowid, text, topic, tags, scope_token)
    VALUES ('delete', old.id, old.text, old.topic, old.tags, old.scope_token);
END;

CREATE TRIGGER learnings_fts_update AFTER UPDATE OF text, topic, tags, scope_token ON learnings BEGIN
    INSERT INTO learnings_fts (learnings_fts, rowid, text, topic, tags, scope_token)
    VALUES ('delete', old.id, old.text, old.topic, old.tags, old.scope_token);
    INSERT INTO learnings_fts (rowid, text, topic, tags, scope_token)
    VALUES (new.id, new.text, new.topic, new.tags, new.scope_token);
END;

-- Append-only log of every change. `seq` doubles as the SSE event id.
CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant      TEXT NOT NULL,
    user_id     TEXT NOT NULL DEFAULT '',
    learning_id INTEGER,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    panel       TEXT NOT NULL,
    before      TEXT,
    after       TEXT,
    reason      TEXT,
    at          REAL NOT NULL,
    data        TEXT NOT NULL DEFAULT '{}'
);

CREATE INDEX events_by_tenant   ON events (tenant, seq);
CREATE INDEX events_by_user     ON events (tenant, user_id, seq);
CREATE INDEX events_by_learning ON events (tenant, learning_id, seq);

-- Which learnings changed in a way the in-memory vector partitions must see. Processes replay it to
-- keep their caches in step with writes made by other processes.
CREATE TABLE vector_changes (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant      TEXT    NOT NULL,
    user_id     TEXT    NOT NULL,
    learning_id INTEGER NOT NULL
);

CREATE INDEX vector_changes_by_partition ON vector_changes (tenant, user_id, seq);

CREATE TABLE vocabularies (
    tenant     TEXT NOT NULL,
    namespace  TEXT NOT NULL,
    body       TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (tenant, namespace)
);
