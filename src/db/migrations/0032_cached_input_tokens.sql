-- Issue 30 Scope 4: input tokens a call read from the provider's prompt cache (a part of input_tokens), charged at the
-- catalogue's cached-input price in cost_usd.
ALTER TABLE usage_records
  ADD COLUMN cached_input_tokens integer NOT NULL DEFAULT 0;
