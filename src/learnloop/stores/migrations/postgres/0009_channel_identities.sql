-- Seed 001 §2 (`users`, `channel_sessions`) and §8.8: one person across channels. A canonical user is the id
-- every other table keys on; `interaction_count` counts messages that came in through a channel identity.
-- `merged_into` names the user this one was merged into after two identities with history were linked;
-- `merge_done` is 0 while that merge is still moving rows (a crash resumes it), 1 after.
CREATE TABLE canonical_users (
    tenant            TEXT    NOT NULL,
    user_id           TEXT    NOT NULL,
    display_name      TEXT,
    interaction_count BIGINT  NOT NULL DEFAULT 0,
    first_seen        DOUBLE PRECISION    NOT NULL,
    last_seen         DOUBLE PRECISION    NOT NULL,
    merged_into       TEXT,
    merge_done        BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, user_id)
);
CREATE INDEX canonical_users_merged ON canonical_users (tenant, merged_into) WHERE merged_into IS NOT NULL;

-- A channel's user (a Telegram id, a WhatsApp phone number, a web session) mapped to a canonical user. The
-- channel's id is stored only as a pseudonym (`channel_key`, id:<hash>) and a masked hint for people to tell
-- identities apart; never raw.
CREATE TABLE channel_identities (
    tenant      TEXT    NOT NULL,
    channel     TEXT    NOT NULL,
    channel_key TEXT    NOT NULL,
    user_id     TEXT    NOT NULL,
    masked_id   TEXT    NOT NULL DEFAULT '',
    username    TEXT,
    metadata    TEXT    NOT NULL DEFAULT '{}',
    active      INTEGER NOT NULL DEFAULT 1,
    created_at  DOUBLE PRECISION    NOT NULL,
    last_active DOUBLE PRECISION    NOT NULL,
    PRIMARY KEY (tenant, channel, channel_key)
);
CREATE INDEX channel_identities_by_user ON channel_identities (tenant, user_id);

-- Link codes, stored hashed: issued on one identity (the user it joins), redeemed once on another before expiry.
CREATE TABLE link_codes (
    tenant      TEXT NOT NULL,
    code_hash   TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    channel     TEXT NOT NULL,
    channel_key TEXT NOT NULL,
    created_at  DOUBLE PRECISION NOT NULL,
    expires_at  DOUBLE PRECISION NOT NULL,
    used_at     DOUBLE PRECISION,
    PRIMARY KEY (tenant, code_hash)
);
CREATE INDEX link_codes_by_user ON link_codes (tenant, user_id);

-- Failed redemptions per redeeming identity, counted durably: enough of them lock it out for a while.
CREATE TABLE link_attempts (
    tenant       TEXT    NOT NULL,
    channel      TEXT    NOT NULL,
    channel_key  TEXT    NOT NULL,
    user_id      TEXT    NOT NULL,
    failures     BIGINT  NOT NULL DEFAULT 0,
    locked_until DOUBLE PRECISION,
    updated_at   DOUBLE PRECISION    NOT NULL,
    PRIMARY KEY (tenant, channel, channel_key)
);
CREATE INDEX link_attempts_by_user ON link_attempts (tenant, user_id);
