-- Learnings the current write gate refuses, found by a recheck (`learnloop gate --recheck`, or in the
-- background when the gate's rules change): quarantined learnings are deprecated (so never retrieved) and
-- listed here for review with the status they had, so a person can put them back (`--release`). Rows hold
-- ids and rule names only, never the text. `released_at` is set when a person releases one.
CREATE TABLE gate_quarantine (
    tenant          TEXT    NOT NULL,
    learning_id     INTEGER NOT NULL,
    previous_status TEXT    NOT NULL,
    rule            TEXT    NOT NULL,
    kind            TEXT    NOT NULL,
    gate_version    TEXT    NOT NULL,
    at              REAL    NOT NULL,
    released_at     REAL,
    released_by     TEXT,
    PRIMARY KEY (tenant, learning_id)
);

-- The rule version of the gate that last checked every stored learning (key 'rule_version').
CREATE TABLE gate_state (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
