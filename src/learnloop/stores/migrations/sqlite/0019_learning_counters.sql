-- What retrievals record per served learning (hits, streak, when last retrieved) moves out of the wide learnings
-- row into a narrow table of its own: recording a retrieval rewrote a ~750-byte row (and its 8 KB page) for each
-- shown learning, and returned and decoded whole rows; now it upserts a row of a few dozen bytes. A learning
-- never retrieved has no row here (its counters are 0, 0 and NULL).
CREATE TABLE learning_counters (
    learning_id       INTEGER PRIMARY KEY,
    tenant            TEXT    NOT NULL,
    user_id           TEXT    NOT NULL,
    hits              INTEGER NOT NULL DEFAULT 0,
    streak            INTEGER NOT NULL DEFAULT 0,
    last_retrieved_at REAL
);
CREATE INDEX learning_counters_by_owner ON learning_counters (tenant, user_id);

INSERT INTO learning_counters (learning_id, tenant, user_id, hits, streak, last_retrieved_at)
SELECT id, tenant, user_id, hits, streak, last_retrieved_at FROM learnings
WHERE hits != 0 OR streak != 0 OR last_retrieved_at IS NOT NULL;

ALTER TABLE learnings DROP COLUMN hits;
ALTER TABLE learnings DROP COLUMN streak;
ALTER TABLE learnings DROP COLUMN last_retrieved_at;

-- Counters go with their learning, whichever statement deletes it (a forget, a purge, a delete), and follow it
-- to another owner.
CREATE TRIGGER learning_counters_deleted AFTER DELETE ON learnings BEGIN
    DELETE FROM learning_counters WHERE learning_id = old.id;
END;
CREATE TRIGGER learning_counters_moved AFTER UPDATE OF tenant, user_id ON learnings BEGIN
    UPDATE learning_counters SET tenant = new.tenant, user_id = new.user_id WHERE learning_id = new.id;
END;

-- A learning as readers see it: its row and its counters (`stores.sql.rows.LEARNING_ROWS`).
CREATE VIEW learning_rows AS
SELECT learnings.*, COALESCE(c.hits, 0) AS hits, COALESCE(c.streak, 0) AS streak,
       c.last_retrieved_at AS last_retrieved_at
FROM learnings LEFT JOIN learning_counters AS c ON c.learning_id = learnings.id;
