-- The write gate's rule version (`capture.gate_version`) that accepted the learning's text: set by the governed
-- write and by a recheck; NULL when no known gate has read the text as it is (imports, raw edits). Retrieval
-- checks only learnings the current gate has not read, instead of every learning it serves.
ALTER TABLE learnings ADD COLUMN gate_version TEXT;

-- A text changed by any writer (an edit below learnloop included) is no longer known to be accepted, unless the
-- same statement names the gate that read the new text.
CREATE TRIGGER learnings_text_unchecked AFTER UPDATE OF text ON learnings
WHEN NEW.text IS NOT OLD.text AND NEW.gate_version IS OLD.gate_version
BEGIN
    UPDATE learnings SET gate_version = NULL WHERE id = NEW.id;
END;
