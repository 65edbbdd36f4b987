-- Each learning's keyword terms, stemmed, as the search partitions index them (`stores.search.stored_terms`):
-- loading a partition reads them instead of tokenising every text in Python. Written with the row by every
-- learnloop write; NULL for rows written before this migration (a load tokenises those, and an idle pass stores
-- them, `stores.sql.terms_backfill`).
ALTER TABLE learnings ADD COLUMN index_terms TEXT;

-- A text, topic or tags changed by a writer that did not set the terms in the same statement (an edit below
-- learnloop) leaves them unknown rather than stale.
CREATE FUNCTION learnings_terms_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (NEW.text, NEW.topic, NEW.tags) IS DISTINCT FROM (OLD.text, OLD.topic, OLD.tags)
        AND NEW.index_terms IS NOT DISTINCT FROM OLD.index_terms THEN
        NEW.index_terms := NULL;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER learnings_terms_stale BEFORE UPDATE OF text, topic, tags ON learnings
FOR EACH ROW EXECUTE FUNCTION learnings_terms_stale();

-- The rows the idle backfill stores terms for: those up to the newest learning of today (later ones are written
-- with theirs). It records how far it got under 'index_terms_checked_through'.
INSERT INTO store_meta (key, value) SELECT 'index_terms_unstored_through', COALESCE(MAX(id), 0) FROM learnings;
