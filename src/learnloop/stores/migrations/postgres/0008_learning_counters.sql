-- What retrievals record per served learning (hits, streak, when last retrieved) moves out of the wide learnings
-- row into a narrow table of its own, as SQLite's 0019 does: recording a retrieval upserts a small row instead of
-- rewriting the learning's. A learning never retrieved has no row here (its counters are 0, 0 and NULL).
CREATE TABLE learning_counters (
    learning_id       BIGINT  PRIMARY KEY REFERENCES learnings (id) ON DELETE CASCADE,
    tenant            TEXT    NOT NULL,
    user_id           TEXT    NOT NULL,
    hits              BIGINT  NOT NULL DEFAULT 0,
    streak            BIGINT  NOT NULL DEFAULT 0,
    last_retrieved_at DOUBLE PRECISION
);
CREATE INDEX learning_counters_by_owner ON learning_counters (tenant, user_id);

INSERT INTO learning_counters (learning_id, tenant, user_id, hits, streak, last_retrieved_at)
SELECT id, tenant, user_id, hits, streak, last_retrieved_at FROM learnings
WHERE hits != 0 OR streak != 0 OR last_retrieved_at IS NOT NULL;

ALTER TABLE learnings DROP COLUMN hits, DROP COLUMN streak, DROP COLUMN last_retrieved_at;

-- Counters follow their learning to another owner (the foreign key deletes them with it).
CREATE FUNCTION learning_counters_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE learning_counters SET tenant = NEW.tenant, user_id = NEW.user_id WHERE learning_id = NEW.id;
    RETURN NULL;
END $$;

CREATE TRIGGER learning_counters_moved AFTER UPDATE OF tenant, user_id ON learnings
FOR EACH ROW WHEN ((NEW.tenant, NEW.user_id) IS DISTINCT FROM (OLD.tenant, OLD.user_id))
EXECUTE FUNCTION learning_counters_moved();

-- A learning as readers see it: its row and its counters (`stores.sql.rows.LEARNING_ROWS`). PostgreSQL fixes
-- `learnings.*` when the view is made: a later migration that adds a column to learnings recreates the view.
CREATE VIEW learning_rows AS
SELECT learnings.*, COALESCE(c.hits, 0) AS hits, COALESCE(c.streak, 0) AS streak,
       c.last_retrieved_at AS last_retrieved_at
FROM learnings LEFT JOIN learning_counters AS c ON c.learning_id = learnings.id;
