-- Per-session turn state for the observer: what was retrieved and saved in each turn, so that the next
-- turn's feedback can reach those learnings, duplicates within 30 s are recognised, and recalled text is
-- never extracted again.

CREATE TABLE turns (
    tenant        TEXT    NOT NULL,
    user_id       TEXT    NOT NULL,
    session       TEXT    NOT NULL,
    turn          INTEGER NOT NULL,
    message_hash  TEXT    NOT NULL,
    topic_terms   TEXT    NOT NULL DEFAULT '[]',
    retrieved_ids TEXT    NOT NULL DEFAULT '[]',
    saved_ids     TEXT    NOT NULL DEFAULT '[]',
    feedback_type TEXT,
    feedback_score REAL,
    at            REAL    NOT NULL,
    PRIMARY KEY (tenant, user_id, session, turn)
);

CREATE INDEX turns_by_time ON turns (tenant, user_id, at);
