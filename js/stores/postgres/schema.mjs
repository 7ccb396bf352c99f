// The tables of turnkeep/postgres, created by one idempotent migration the host runs once (at
// deploy, or at start: running it again is a no-op). Text columns hold JSON exactly as the core
// produced it; `cursor` is a column of its own so a save can compare it in its WHERE clause.
//
// Adding a store (the session log) adds a table here; existing statements never change shape.

/** Serialises concurrent migrations (two instances starting at once): an arbitrary constant. */
const MIGRATION_LOCK_KEY = 7_220_416_001;

export const SESSIONS_TABLE = 'turnkeep_sessions';
export const CONVERSATIONS_TABLE = 'turnkeep_conversations';
export const MESSAGES_TABLE = 'turnkeep_messages';

/**
 * The migration as one SQL text (several statements). Sent without parameters it runs as one
 * implicit transaction in both pg and postgres.js; the advisory lock makes a concurrent second
 * run wait instead of failing on a half-created table.
 */
export const MIGRATION_SQL = `-- turnkeep/postgres schema 1 (idempotent)
SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY});

CREATE TABLE IF NOT EXISTS ${SESSIONS_TABLE} (
  scope      text        NOT NULL,
  session_id text        NOT NULL,
  cursor     bigint      NOT NULL,
  envelope   text        NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, session_id)
);

-- How many messages the current conversation of a session has: readers take the rows below it.
CREATE TABLE IF NOT EXISTS ${CONVERSATIONS_TABLE} (
  scope         text        NOT NULL,
  session_id    text        NOT NULL,
  message_count integer     NOT NULL,
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, session_id)
);

-- One row per message: no row grows with the conversation.
CREATE TABLE IF NOT EXISTS ${MESSAGES_TABLE} (
  scope      text    NOT NULL,
  session_id text    NOT NULL,
  position   integer NOT NULL,
  message    text    NOT NULL,
  PRIMARY KEY (scope, session_id, position)
);
`;
