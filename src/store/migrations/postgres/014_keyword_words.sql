-- The keyword index splits text into words the way queries are split (letters, digits and
-- underscores). PostgreSQL's parser otherwise keeps a path (`src/build.ts`), a host
-- (`api.example.com`) or a dotted name (`worker.run`) as one token that no query word matches;
-- SQLite's FTS5 already splits them. Decisions' index gets the same rule.
DROP INDEX memory_search;
ALTER TABLE memory DROP COLUMN search;
ALTER TABLE memory ADD COLUMN search TSVECTOR
  GENERATED ALWAYS AS (to_tsvector('english', regexp_replace(content || ' ' || tags, '[/.:@\\]+', ' ', 'g'))) STORED;
CREATE INDEX memory_search ON memory USING GIN (search);

DROP INDEX decisions_search;
ALTER TABLE decisions DROP COLUMN search;
ALTER TABLE decisions ADD COLUMN search TSVECTOR
  GENERATED ALWAYS AS (to_tsvector('english', regexp_replace(decision || ' ' || rationale, '[/.:@\\]+', ' ', 'g'))) STORED;
CREATE INDEX decisions_search ON decisions USING GIN (search);
