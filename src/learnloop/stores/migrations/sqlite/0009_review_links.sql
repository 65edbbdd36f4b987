-- Dedupe never loses knowledge: what it merged or replaced stays as a deprecated row that names its
-- successor, pairs it could not call one fact or two are linked for review, and a learning keeps every source
-- it came from.

ALTER TABLE learnings ADD COLUMN superseded_by INTEGER;
ALTER TABLE learnings ADD COLUMN status_reason TEXT;

CREATE TABLE learning_links (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant      TEXT    NOT NULL,
    user_id     TEXT    NOT NULL DEFAULT '',
    learning_id INTEGER NOT NULL,
    other_id    INTEGER NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('possible_duplicate', 'possible_conflict')),
    reason      TEXT    NOT NULL DEFAULT '',
    similarity  REAL,
    resolution  TEXT CHECK (resolution IN ('keep_both', 'keep_new', 'keep_old', 'merge')),
    created_at  REAL    NOT NULL,
    resolved_at REAL,
    resolved_by TEXT
);

CREATE INDEX learning_links_open ON learning_links (tenant, user_id, resolution, id);
CREATE INDEX learning_links_by_learning ON learning_links (tenant, learning_id);
CREATE INDEX learning_links_by_other ON learning_links (tenant, other_id);

CREATE TABLE learning_sources (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant      TEXT    NOT NULL,
    user_id     TEXT    NOT NULL DEFAULT '',
    learning_id INTEGER NOT NULL,
    action      TEXT    NOT NULL,
    origin      TEXT    NOT NULL,
    session     TEXT,
    message     TEXT,
    interaction TEXT,
    context     TEXT,
    author      TEXT,
    text        TEXT,
    at          REAL    NOT NULL
);

CREATE INDEX learning_sources_by_learning ON learning_sources (tenant, learning_id, id);
