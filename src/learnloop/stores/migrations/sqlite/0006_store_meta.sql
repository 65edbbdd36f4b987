-- Counters every process sharing the file watches. `forget_epoch` moves when a user is forgotten, so other
-- processes drop their in-memory search partitions (which may hold that user's vectors and terms).
CREATE TABLE store_meta (
    key   TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);

INSERT INTO store_meta (key, value) VALUES ('forget_epoch', 0);
