-- Room on each page of memory for a row's next version: a read's count (read_count,
-- distinct_readers) changes no indexed column, so with the new version on the old one's page
-- PostgreSQL updates it in place (HOT) and touches none of the table's sixteen indexes, the GIN
-- index of its words among them. On full pages each such update inserted into every index: a
-- batch of counts took 11 ms at 100,000 entries (2 with room), and its GIN entries went to the
-- index's pending list, which every keyword search reads until it is merged (docs/decisions.md,
-- "PostgreSQL: room on memory's pages for a read's count"). Only pages written from now on keep
-- the room; a store's older pages gain it as their rows move, or at once with VACUUM FULL at a
-- quiet time (docs/operations.md).
ALTER TABLE memory SET (fillfactor = 80);
