-- OpenAI conversations sent without X-Session-ID (issue 12): a hash of the transcript a client will send
-- back (user, system prompt, every message through an answer it was given) names the session its next turn
-- continues. One row per delivered answer; a transcript delivered in two sessions (identical conversations)
-- cannot tell them apart and keeps session_id null, so its continuation starts a session of its own.
CREATE TABLE chat_transcripts (
  tenant_id      uuid NOT NULL,
  user_id        uuid NOT NULL,
  transcript_key text NOT NULL,
  session_id     uuid REFERENCES sessions(id) ON DELETE CASCADE,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, user_id, transcript_key)
);
