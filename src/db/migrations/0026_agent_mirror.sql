-- Issue 29: each tenant's mirror of the agent catalogue (GET /api/v1/agents/sync, spec 4.9). The catalogue is the
-- operator's configuration (config/agents); a row is the tenant's copy of one agent as last synced. An agent removed
-- from the catalogue stays as a tombstone (deleted_at set), so a client that syncs learns that it is gone.
CREATE TABLE agent_mirror (
  tenant_id    uuid NOT NULL REFERENCES tenants(id),
  agent_key    text NOT NULL,
  config       jsonb NOT NULL,
  config_hash  text NOT NULL,
  version      integer NOT NULL DEFAULT 1,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  deleted_at   timestamptz,
  PRIMARY KEY (tenant_id, agent_key)
);
