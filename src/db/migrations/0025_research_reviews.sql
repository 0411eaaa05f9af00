-- Issue 27 Scope 6: the human review of a research plan (spec 2.13, 3.2, 4.3; reference §3.1). A research task that
-- asks for review drafts a plan and waits, parked (task_waits signal 'plan-review'), while its owner sends feedback
-- rounds and finally approves. Every change is made under the task's row lock first, as every task change is.
-- `feedback_lock` keeps one feedback round at a time per task across processes while its model call runs (no
-- transaction stays open over the call); it lapses at `feedback_lock_until` if its holder dies.
CREATE TABLE research_reviews (
  task_id             uuid PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
  tenant_id           uuid NOT NULL REFERENCES tenants(id),
  user_id             uuid NOT NULL REFERENCES users(id),
  query               text NOT NULL,
  status              text NOT NULL CHECK (status IN ('reviewing', 'approved', 'timed_out')),
  round               integer NOT NULL DEFAULT 1,
  version             integer NOT NULL DEFAULT 1,
  current_plan        text NOT NULL DEFAULT '',
  research_brief      text NOT NULL DEFAULT '',
  rounds              jsonb NOT NULL DEFAULT '[]',
  feedback_lock       uuid,
  feedback_lock_until timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  -- The review times out here (the task fails); it can be read until retained_until, then it is gone (404).
  review_deadline     timestamptz NOT NULL,
  retained_until      timestamptz NOT NULL
);
CREATE INDEX research_reviews_open_deadline ON research_reviews (review_deadline) WHERE status = 'reviewing';
CREATE INDEX research_reviews_retained ON research_reviews (retained_until);
