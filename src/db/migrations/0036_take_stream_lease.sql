-- Issue 30 (hot path round 2): a stream slot taken in one statement (streaming/stream-slots.ts). The credential's
-- advisory lock used to be held across four round trips from the gateway (lock, count, insert, commit); under
-- load every stream of the credential queued behind them, holding pool connections while it waited (199 ms per
-- streamed chat completion at 32 streams). Inside a function each statement takes a new snapshot, so the count
-- sees every lease committed before the lock was granted, as the transaction did. The lock is held until the commit,
-- so the commit does not wait for the WAL flush: a lease lost to a crash of Postgres merely stops counting, as a
-- lease its process stopped renewing does (docs/decisions.md, issue 30: streamed chat completions).
CREATE OR REPLACE FUNCTION take_stream_lease(p_id uuid, p_key text, p_max integer, p_ttl_seconds integer)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM pg_advisory_xact_lock(hashtextextended('stream:' || p_key, 0));
  IF (SELECT count(*) FROM stream_leases
      WHERE credential_key = p_key AND renewed_at > now() - make_interval(secs => p_ttl_seconds)) >= p_max THEN
    RETURN false;
  END IF;
  INSERT INTO stream_leases (id, credential_key) VALUES (p_id, p_key);
  RETURN true;
END;
$$;
