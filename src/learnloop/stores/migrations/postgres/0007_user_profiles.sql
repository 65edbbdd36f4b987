-- Seed 001's user memory (§2 layer 2, §6.1): how often each user asks about what, with decay. A pattern is one
-- (kind, value) such as ('metric', 'revenue') or ('time_range', 'last_month'); `weight` is its decayed frequency
-- as of `last_at` (readers decay it on to their own time), `count` how many times it was seen in all.
CREATE TABLE user_patterns (
    tenant   TEXT    NOT NULL,
    user_id  TEXT    NOT NULL,
    kind     TEXT    NOT NULL,
    value    TEXT    NOT NULL,
    weight   DOUBLE PRECISION NOT NULL,
    count    BIGINT  NOT NULL,
    first_at DOUBLE PRECISION NOT NULL,
    last_at  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (tenant, user_id, kind, value)
);

-- One row per user with a profile: interactions counted, and what a person set by hand (JSON), which wins over
-- what the patterns say.
CREATE TABLE user_profiles (
    tenant       TEXT    NOT NULL,
    user_id      TEXT    NOT NULL,
    interactions BIGINT  NOT NULL DEFAULT 0,
    overrides    TEXT    NOT NULL DEFAULT '{}',
    created_at   DOUBLE PRECISION NOT NULL,
    updated_at   DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (tenant, user_id)
);
