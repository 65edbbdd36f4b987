-- The service: API keys per tenant, and persisted write-outcome counters.

-- Keys are never stored: only an HMAC-SHA256 of the secret part under a per-key random salt. `key_id` is
-- the public part of the key (ll_<key_id>_<secret>) and finds the row without scanning.
-- role: admin (everything in the tenant), app (any user of the tenant), user (only user_id's data).
-- user_id is '' except for user-bound keys; it is listed in SQLiteStore.user_tables so that forgetting a
-- user also removes their keys.
CREATE TABLE api_keys (
    key_id       TEXT PRIMARY KEY,
    tenant       TEXT NOT NULL,
    user_id      TEXT NOT NULL DEFAULT '',
    role         TEXT NOT NULL CHECK (role IN ('admin', 'app', 'user')),
    name         TEXT NOT NULL DEFAULT '',
    salt         TEXT NOT NULL,
    digest       TEXT NOT NULL,
    created_at   REAL NOT NULL,
    last_used_at REAL,
    revoked_at   REAL,
    CHECK ((role = 'user') = (user_id != ''))
);

CREATE INDEX api_keys_by_tenant ON api_keys (tenant, user_id);

-- Write outcomes that leave no event (refusals by gate rule, skipped duplicates), counted per hour.
-- Names and counts only: the refused text is never stored anywhere.
CREATE TABLE write_counters (
    tenant TEXT    NOT NULL,
    name   TEXT    NOT NULL,
    bucket INTEGER NOT NULL,
    value  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, name, bucket)
);
