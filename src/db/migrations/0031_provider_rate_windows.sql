-- Issue 30: provider request and token limits shared by every process. One row per limit key (a provider
-- deployment's rpm or tpm, or a tenant's share of it): how much of the current fixed window is used. Unlogged: the
-- counts matter for a minute at most, and a crash that loses them costs at worst one window of over-admission.
CREATE UNLOGGED TABLE provider_rate_windows (
  key           text PRIMARY KEY,
  window_start  bigint NOT NULL,
  used          integer NOT NULL
);
