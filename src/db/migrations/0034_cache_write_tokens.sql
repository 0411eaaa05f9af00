-- Issue 30 Scope 4: input tokens a call wrote to the provider's prompt cache (Anthropic's cache_creation_input_tokens,
-- a part of input_tokens), charged at the catalogue's cache-write price in cost_usd.
ALTER TABLE usage_records
  ADD COLUMN cache_write_tokens integer NOT NULL DEFAULT 0;
