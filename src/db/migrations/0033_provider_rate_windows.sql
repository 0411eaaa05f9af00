-- Issue 30: provider request and token limits shared by every process. One row per limit key (a provider
-- deployment's rpm or tpm, or a tenant's share of it) with the moment, in ms since the epoch on the database's clock,
-- from which the key has room again (GCRA pacing: llm/provider-traffic.ts). Unlogged: a row matters for a minute at
-- most, and a crash that loses them costs at most one window of calls sent without pacing.
CREATE UNLOGGED TABLE provider_rate_windows (
  key           text PRIMARY KEY,
  next_free_ms  double precision NOT NULL
);
