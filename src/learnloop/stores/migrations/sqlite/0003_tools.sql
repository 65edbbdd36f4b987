-- Tool intelligence: catalog, usage signals, learned query→tool pairs, templates, recovery patterns,
-- per-intent statistics, global insights, privacy choices.
-- user_id '' marks knowledge shared by the whole tenant. Every table holding a user's data has
-- (tenant, user_id) and is listed in SQLiteStore.user_tables, so forgetting a user deletes it.

CREATE TABLE tool_catalog (
    tenant          TEXT NOT NULL,
    name            TEXT NOT NULL,
    server          TEXT NOT NULL DEFAULT '',
    description     TEXT NOT NULL DEFAULT '',
    input_schema    TEXT NOT NULL DEFAULT '{}',
    digest          TEXT NOT NULL,
    embedding       BLOB,
    embedding_model TEXT,
    created_at      REAL NOT NULL,
    updated_at      REAL NOT NULL,
    PRIMARY KEY (tenant, name)
);

-- Every observed event. `applied` is 0 for weak signals waiting for the next batch; they keep their
-- query vector until then (and only until then).
CREATE TABLE tool_signals (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant      TEXT    NOT NULL,
    user_id     TEXT    NOT NULL DEFAULT '',
    session     TEXT    NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('list', 'call', 'search')),
    tool        TEXT,
    tools       TEXT    NOT NULL DEFAULT '[]',
    arguments   TEXT    NOT NULL DEFAULT '{}',
    ok          INTEGER,
    error_type  TEXT,
    error       TEXT,
    fingerprint TEXT,
    signature   TEXT,
    latency_ms  REAL,
    strength    TEXT,
    weight      REAL    NOT NULL DEFAULT 0,
    intent      TEXT    NOT NULL DEFAULT '',
    query_hash  TEXT,
    query_text  TEXT,
    shared      INTEGER NOT NULL DEFAULT 1,
    applied     INTEGER NOT NULL DEFAULT 1,
    embedding   BLOB,
    embedding_model TEXT,
    at          REAL    NOT NULL
);

CREATE INDEX tool_signals_by_session ON tool_signals (tenant, user_id, session, id);
CREATE INDEX tool_signals_by_user    ON tool_signals (tenant, user_id, kind, at);
CREATE INDEX tool_signals_failed     ON tool_signals (tenant, at) WHERE kind = 'call' AND ok = 0;
CREATE INDEX tool_signals_pending    ON tool_signals (tenant, id) WHERE applied = 0;

-- Seed 002's learned pairs: the embedding of a query (never its text unless privacy is 'full') that led
-- to a tool being used, keyed by a hash of the query.
CREATE TABLE tool_pairs (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant          TEXT    NOT NULL,
    user_id         TEXT    NOT NULL DEFAULT '',
    tool            TEXT    NOT NULL,
    query_hash      TEXT    NOT NULL,
    query_text      TEXT,
    embedding       BLOB    NOT NULL,
    embedding_model TEXT    NOT NULL,
    confidence      REAL    NOT NULL,
    uses            INTEGER NOT NULL DEFAULT 1,
    strength        TEXT    NOT NULL,
    created_at      REAL    NOT NULL,
    last_used_at    REAL    NOT NULL,
    UNIQUE (tenant, user_id, tool, query_hash)
);

CREATE INDEX tool_pairs_by_tool ON tool_pairs (tenant, tool);

CREATE TABLE tool_stats (
    tenant       TEXT    NOT NULL,
    user_id      TEXT    NOT NULL DEFAULT '',
    intent       TEXT    NOT NULL DEFAULT '',
    tool         TEXT    NOT NULL,
    successes    INTEGER NOT NULL DEFAULT 0,
    failures     INTEGER NOT NULL DEFAULT 0,
    latency_sum  REAL    NOT NULL DEFAULT 0,
    latency_n    INTEGER NOT NULL DEFAULT 0,
    last_used_at REAL    NOT NULL,
    PRIMARY KEY (tenant, user_id, intent, tool)
);

CREATE TABLE tool_templates (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant            TEXT    NOT NULL,
    user_id           TEXT    NOT NULL DEFAULT '',
    intent            TEXT    NOT NULL DEFAULT '',
    tool              TEXT    NOT NULL,
    signature         TEXT    NOT NULL,
    params            TEXT    NOT NULL DEFAULT '{}',
    description       TEXT    NOT NULL DEFAULT '',
    successes         INTEGER NOT NULL DEFAULT 0,
    failures          INTEGER NOT NULL DEFAULT 0,
    feedback_positive REAL    NOT NULL DEFAULT 0,
    feedback_negative REAL    NOT NULL DEFAULT 0,
    prior             REAL    NOT NULL DEFAULT 0,
    latency_sum       REAL    NOT NULL DEFAULT 0,
    latency_n         INTEGER NOT NULL DEFAULT 0,
    -- Sum of the query vectors that used this template (their direction is the template's "intent").
    embedding         BLOB,
    embedding_model   TEXT,
    origin            TEXT    NOT NULL DEFAULT 'learned' CHECK (origin IN ('learned', 'seed')),
    status            TEXT    NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    created_at        REAL    NOT NULL,
    last_used_at      REAL    NOT NULL,
    UNIQUE (tenant, user_id, intent, tool, signature)
);

CREATE INDEX tool_templates_by_intent ON tool_templates (tenant, intent, status);
CREATE INDEX tool_templates_by_tool   ON tool_templates (tenant, tool, intent);

-- Example queries are the user's words, so they are the user's rows even when the template is shared.
CREATE TABLE tool_template_examples (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant      TEXT    NOT NULL,
    user_id     TEXT    NOT NULL DEFAULT '',
    template_id INTEGER NOT NULL,
    text        TEXT    NOT NULL,
    at          REAL    NOT NULL
);

CREATE INDEX tool_template_examples_by_template ON tool_template_examples (template_id, id);

CREATE TABLE tool_recoveries (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant             TEXT    NOT NULL,
    user_id            TEXT    NOT NULL DEFAULT '',
    fingerprint        TEXT    NOT NULL,
    error_type         TEXT    NOT NULL,
    failed_tool        TEXT    NOT NULL,
    failed_params      TEXT    NOT NULL DEFAULT '{}',
    recovery_tool      TEXT    NOT NULL,
    recovery_params    TEXT    NOT NULL DEFAULT '{}',
    recovery_signature TEXT    NOT NULL,
    description        TEXT    NOT NULL,
    times_applied      INTEGER NOT NULL DEFAULT 1,
    times_succeeded    INTEGER NOT NULL DEFAULT 1,
    status             TEXT    NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    created_at         REAL    NOT NULL,
    last_used_at       REAL    NOT NULL,
    UNIQUE (tenant, user_id, fingerprint, recovery_signature)
);

CREATE INDEX tool_recoveries_by_type ON tool_recoveries (tenant, error_type, failed_tool);

-- Anonymised cross-user aggregates: no user column on purpose.
CREATE TABLE tool_insights (
    tenant      TEXT    NOT NULL,
    type        TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    value       TEXT    NOT NULL,
    sample_size INTEGER NOT NULL,
    confidence  REAL    NOT NULL,
    updated_at  REAL    NOT NULL,
    PRIMARY KEY (tenant, type, key)
);

CREATE TABLE tool_privacy (
    tenant     TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    mode       TEXT NOT NULL CHECK (mode IN ('full', 'hashed', 'opt_out')),
    updated_at REAL NOT NULL,
    PRIMARY KEY (tenant, user_id)
);

-- Which catalog entries and learned pairs changed, so every process keeps its in-memory routing index
-- in step with writes made elsewhere (and with deletions made by forgetting a user).
CREATE TABLE tool_changes (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT    NOT NULL,
    kind   TEXT    NOT NULL CHECK (kind IN ('catalog', 'pair')),
    ref    INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX tool_changes_by_tenant ON tool_changes (tenant, seq);

CREATE TRIGGER tool_catalog_inserted AFTER INSERT ON tool_catalog BEGIN
    INSERT INTO tool_changes (tenant, kind) VALUES (new.tenant, 'catalog');
END;

CREATE TRIGGER tool_catalog_updated AFTER UPDATE ON tool_catalog BEGIN
    INSERT INTO tool_changes (tenant, kind) VALUES (new.tenant, 'catalog');
END;

CREATE TRIGGER tool_catalog_deleted AFTER DELETE ON tool_catalog BEGIN
    INSERT INTO tool_changes (tenant, kind) VALUES (old.tenant, 'catalog');
END;

CREATE TRIGGER tool_pairs_inserted AFTER INSERT ON tool_pairs BEGIN
    INSERT INTO tool_changes (tenant, kind, ref) VALUES (new.tenant, 'pair', new.id);
END;

CREATE TRIGGER tool_pairs_updated AFTER UPDATE ON tool_pairs BEGIN
    INSERT INTO tool_changes (tenant, kind, ref) VALUES (new.tenant, 'pair', new.id);
END;

CREATE TRIGGER tool_pairs_deleted AFTER DELETE ON tool_pairs BEGIN
    INSERT INTO tool_changes (tenant, kind, ref) VALUES (old.tenant, 'pair', old.id);
END;
