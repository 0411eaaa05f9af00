-- An event's timestamp is when it was appended, not when its transaction began: now() is the transaction's
-- start, so the events of a transaction that waited (for a task's event cursor, a budget lock) were stamped
-- before events that other transactions appended meanwhile with lower seqs, and before most of the work that
-- produced them. clock_timestamp() is read as each row is inserted, after the cursor's lock (store_task_events),
-- so a task's timestamps rise with its seqs.
ALTER TABLE task_events ALTER COLUMN created_at SET DEFAULT clock_timestamp();
