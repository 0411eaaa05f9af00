-- Issue 28: the swarm (spec 1, 2.2 force_swarm, 8; reference §1.10). A swarm task advances a team of agents in
-- rounds; what the team shares lives here, so that any process can run the next round and a restart loses nothing.
-- Rows are written only inside the swarm's durable steps (a turn, the lead's decision) and keyed by what makes
-- them unique within the task (agent and turn, sender and round), so a step re-run after a crash writes nothing twice.
-- Human messages are the exception: the message route inserts them (sender 'user'), each under a fresh id.
CREATE TABLE swarm_agents (
  task_id       uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  name          text NOT NULL,
  role          text NOT NULL,
  status        text NOT NULL CHECK (status IN ('active', 'idle', 'failed', 'shutdown')),
  assignment    text,
  spawned_round integer NOT NULL,
  spawned_at    timestamptz NOT NULL DEFAULT now(),
  turns         integer NOT NULL DEFAULT 0,
  findings      text,
  error         text,
  PRIMARY KEY (task_id, name)
);

-- The shared task list (T1, T2, ...): the lead writes it; an agent that goes idle completes its task.
CREATE TABLE swarm_tasks (
  task_id     uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  id          text NOT NULL,
  description text NOT NULL,
  status      text NOT NULL CHECK (status IN ('pending', 'in_progress', 'completed', 'cancelled')),
  owner       text,
  depends_on  text[] NOT NULL DEFAULT '{}',
  created_by  text NOT NULL,
  PRIMARY KEY (task_id, id)
);

-- Mailboxes: one row per message and recipient. `read_round`: the round whose turn (or lead decision) read it.
CREATE TABLE swarm_messages (
  task_id    uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  id         text NOT NULL,
  sender     text NOT NULL,
  recipient  text NOT NULL,
  body       text NOT NULL,
  sent_round integer,
  read_round integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (task_id, id)
);
CREATE INDEX swarm_messages_unread ON swarm_messages (task_id, recipient) WHERE read_round IS NULL;

-- The shared workspace: what agents publish for the team.
CREATE TABLE swarm_workspace (
  task_id    uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  key        text NOT NULL,
  author     text NOT NULL,
  topic      text NOT NULL,
  content    text NOT NULL,
  round      integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (task_id, key)
);

-- Every agent turn (an agent takes at most one per round): its action and what it gave back (a tool's output is in tool_calls under the turn's step key).
CREATE TABLE swarm_turns (
  task_id uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  agent   text NOT NULL,
  round   integer NOT NULL,
  action  jsonb NOT NULL,
  result  text NOT NULL DEFAULT '',
  -- Who answered the turn's call (model, provider, tokens, cost): an idle turn's findings are that agent's answer.
  answered_by jsonb NOT NULL,
  PRIMARY KEY (task_id, agent, round)
);
