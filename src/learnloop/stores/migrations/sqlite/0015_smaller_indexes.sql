-- Smaller indexes beside the learnings (a 10k-learning file: about 1.2 MB less).

-- Only rows that name a session: most name none, and their NULL entries cost 16 bytes a learning.
DROP INDEX learnings_by_session;
CREATE INDEX learnings_by_session ON learnings (tenant, source_session) WHERE source_session IS NOT NULL;

-- The full-text index serves listing's word filter only (retrieval ranks with the search partitions' own BM25):
-- it needs which rows hold a term, not where (detail=none) nor each column's size (columnsize=0, read only by
-- bm25()): 63 bytes a learning before, 17 after. Phrases are then not answered (`sqlite.dialect.match_expression`
-- asks for a split word's parts instead). The triggers of 0001 keep it up to date as before.
DROP TABLE learnings_fts;
CREATE VIRTUAL TABLE learnings_fts USING fts5(
    text, topic, tags, scope_token,
    content = 'learnings', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2',
    detail = none, columnsize = 0
);
INSERT INTO learnings_fts (learnings_fts) VALUES ('rebuild');
