-- Issue 28: what the lead gives an agent at its spawn beyond its role and task. `model_tier`: the tier its turns ask
-- for (small, medium, large; null: medium). `paused_ms_at_spawn`: how long the swarm had been paused when the agent
-- joined, so that its agent_timeout_seconds counts only the time the swarm has run since.
ALTER TABLE swarm_agents
  ADD COLUMN model_tier text,
  ADD COLUMN paused_ms_at_spawn bigint NOT NULL DEFAULT 0;
