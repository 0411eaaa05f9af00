-- Issue 25: a schedule made with an API key runs as that key (its scopes within its user's role, its rate limit)
-- and stops when the key is revoked or expires. Null: made signed in (or before this column), it runs as its user.
-- Rotating the key moves its schedules to the new key.
ALTER TABLE schedules ADD COLUMN api_key_id uuid REFERENCES api_keys(id);
CREATE INDEX schedules_api_key ON schedules (api_key_id) WHERE api_key_id IS NOT NULL AND deleted_at IS NULL;
