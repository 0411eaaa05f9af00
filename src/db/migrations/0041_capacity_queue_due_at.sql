-- Issue 30: when a caller waiting in place (llm/capacity-queue.ts) will ask again. Calls of other tenants that came
-- after it give way while its share has room, so a burst booked by polling cannot keep overtaking it; a row whose
-- caller is long overdue (its process died) stops counting at once instead of after PROVIDER_MAX_WAIT_SECONDS.
-- Parked rows have none: the grant loop serves them.
ALTER TABLE provider_capacity_queue ADD COLUMN due_at timestamptz;
