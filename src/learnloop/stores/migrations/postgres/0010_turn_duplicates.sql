-- Seed 001 §8.6, whole: the same message from the same user within 30 s, on any channel and in any session, is a
-- duplicate. A turn keeps the hash of its (redacted, normalised) message and, when it repeats an earlier turn, that
-- turn's id: the duplicate runs no work and reads its response from the first. The observer's turn records keep
-- the channel they came from, so its feedback figures can be cut per channel.
ALTER TABLE conversations ADD COLUMN message_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE conversations ADD COLUMN duplicate_of TEXT;
ALTER TABLE turns ADD COLUMN channel TEXT NOT NULL DEFAULT '';

-- The user's latest turn, whatever the session: where the duplicate window looks.
CREATE INDEX conversations_by_user ON conversations (tenant, user_id, started_at);
