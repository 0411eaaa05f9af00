-- Accounts, memberships, API keys, refresh tokens, audit log and rate-limit windows.
ALTER TABLE users
  ADD COLUMN password_hash text,
  ADD COLUMN is_active boolean NOT NULL DEFAULT true,
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

ALTER TABLE tenants ADD COLUMN rate_limit_per_minute integer;

-- A user may belong to several tenants; X-Tenant-ID picks one. The role is per membership.
CREATE TABLE memberships (
  user_id    uuid NOT NULL REFERENCES users(id),
  tenant_id  uuid NOT NULL REFERENCES tenants(id),
  role       text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, tenant_id)
);
INSERT INTO memberships (user_id, tenant_id, role) SELECT id, tenant_id, role FROM users;

-- Only the SHA-256 of a key is stored; the secret is shown once at creation.
CREATE TABLE api_keys (
  id                    uuid PRIMARY KEY,
  user_id               uuid NOT NULL REFERENCES users(id),
  tenant_id             uuid NOT NULL REFERENCES tenants(id),
  name                  text NOT NULL,
  prefix                text NOT NULL,
  key_hash              text NOT NULL UNIQUE,
  scopes                text[] NOT NULL,
  rate_limit_per_minute integer,
  expires_at            timestamptz,
  revoked_at            timestamptz,
  last_used_at          timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_owner ON api_keys (tenant_id, user_id);

-- Rotating refresh tokens: reuse of a rotated (revoked) token revokes its whole family.
CREATE TABLE refresh_tokens (
  id          uuid PRIMARY KEY,
  family_id   uuid NOT NULL,
  user_id     uuid NOT NULL REFERENCES users(id),
  tenant_id   uuid NOT NULL REFERENCES tenants(id),
  token_hash  text NOT NULL UNIQUE,
  expires_at  timestamptz NOT NULL,
  revoked_at  timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

CREATE TABLE audit_logs (
  id          bigserial PRIMARY KEY,
  event_type  text NOT NULL,
  user_id     uuid,
  tenant_id   uuid,
  ip          text,
  details     jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_logs_created ON audit_logs (created_at);

-- Fixed-window counters shared by every process (rate limits, login throttling).
CREATE TABLE rate_limit_windows (
  key           text NOT NULL,
  window_start  bigint NOT NULL,
  count         integer NOT NULL,
  PRIMARY KEY (key, window_start)
);
