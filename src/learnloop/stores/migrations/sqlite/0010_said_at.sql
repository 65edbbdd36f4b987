-- When a learning was said (its anchor), and the date or range its time expression resolves to: "I went to
-- the support group yesterday", said on 8 May 2023, is about 7 May 2023.

ALTER TABLE learnings ADD COLUMN said_at REAL;
ALTER TABLE learnings ADD COLUMN event_at REAL;
ALTER TABLE learnings ADD COLUMN event_until REAL;
