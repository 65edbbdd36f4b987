-- Bounded retention of 'retrieved' events: one is appended per retrieval, so they are folded into per-hour
-- counts once older than the store's retention (see stores/sqlite/event_retention.py). The metrics add these
-- counts to the live events. Per (tenant, user_id), because metrics are read per user too; counts only, no
-- ids or text. user_id is listed in SQLiteStore.user_tables, so forgetting a user removes their counts too
-- (as it removes their live events).
CREATE TABLE retrieval_counts (
    tenant     TEXT    NOT NULL,
    user_id    TEXT    NOT NULL DEFAULT '',
    bucket     INTEGER NOT NULL,  -- start of the hour (epoch seconds), like write_counters
    retrievals INTEGER NOT NULL DEFAULT 0,
    hits       INTEGER NOT NULL DEFAULT 0,  -- retrievals that returned at least one learning
    PRIMARY KEY (tenant, user_id, bucket)
);

-- The compaction finds the events due, and the metrics their window, without scanning the whole log.
CREATE INDEX events_retrieved_by_at ON events (at) WHERE action = 'retrieved';
