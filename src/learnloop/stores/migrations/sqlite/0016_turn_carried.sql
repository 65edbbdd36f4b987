-- What a turn hands to the next one of its session (capture.carried): the answer's artifacts waiting for the
-- user's confirmation, the numbers it predicted, the question it answered, the session's corrections in force.
ALTER TABLE turns ADD COLUMN carried TEXT NOT NULL DEFAULT '{}';
