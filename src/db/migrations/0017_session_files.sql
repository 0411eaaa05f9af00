-- The per-session workspace of the file tools (issue 15, scope 5). A table, so every process sees the same
-- files and they outlive restarts. A path is a key, not a place on a disk: no symlinks, no directories of
-- their own (a directory is a prefix of paths). Size and digest are derived from the content by the database,
-- so they can never disagree with it. `is_text` (valid UTF-8, no NUL) is decided by the writer; text files
-- are the ones read by lines, searched, and served as text/plain.
CREATE TABLE session_files (
  session_id uuid NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  path       text NOT NULL,
  content    bytea NOT NULL,
  size       integer GENERATED ALWAYS AS (octet_length(content)) STORED,
  sha256     text GENERATED ALWAYS AS (encode(sha256(content), 'hex')) STORED,
  is_text    boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, path)
);
