-- Bounded retention of `vector_changes`: its rows only serve processes catching up, so they are pruned once
-- older than the store's retention. Rows carry no time of their own (stamping each would cost every write);
-- instead each prune pass records a mark, "every change up to `seq` existed at `at`", and the rows at or
-- below the newest mark older than the retention are the ones that go.
CREATE TABLE vector_change_marks (
    seq INTEGER PRIMARY KEY,
    at  REAL    NOT NULL
);

-- Rows written before marks existed are dated to the epoch: the first prune pass may remove them.
INSERT INTO vector_change_marks (seq, at) SELECT MAX(seq), 0 FROM vector_changes HAVING MAX(seq) IS NOT NULL;

-- The highest seq ever pruned. A partition whose watermark is below it can no longer catch up from the log
-- and is loaded again; a saved ANN index older than it is rebuilt.
INSERT INTO store_meta (key, value) VALUES ('changes_pruned_through', 0);
