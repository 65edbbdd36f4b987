-- A learning's vector (1.5 kB at 384 dimensions) stays in the row: with pgvector's default storage (EXTERNAL) a
-- row over about 2 kB moved it to the TOAST table, uncompressed, so a user's search read each such vector with a
-- TOAST index probe and another page (121 of 200 rows of a 1M-learning database measured). MAIN moves it out
-- only if the row still does not fit a page. Rows written before this migration keep theirs where they are.
ALTER TABLE learnings ALTER COLUMN embedding SET STORAGE MAIN;
