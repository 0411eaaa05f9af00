-- A call through the tools API (issue 15, scope 10) may name no session: its cost is still the caller's
-- usage (tenant and user), as Shannon records direct tool calls without a task or a session.
ALTER TABLE usage_records ALTER COLUMN session_id DROP NOT NULL;
