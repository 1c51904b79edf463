-- An idempotency key's row is now written by the transaction that makes the request's change,
-- with its answer. Status 0 used to mean "reserved, the request still runs"; it now means "the
-- change committed, its answer is not stored". Rows of the old kind are reservations of requests
-- that never finished, which a retry would have taken over and run again after two minutes: it
-- now runs them at once.
DELETE FROM idempotency WHERE status = 0;
