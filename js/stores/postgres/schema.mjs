// The tables of turnkeep/postgres, created by one idempotent migration the host runs once (at
// deploy, or at start: running it again is a no-op). Text columns hold JSON exactly as the core
// produced it; `cursor` is a column of its own so a save can compare it in its WHERE clause.
//
// Adding a store adds its tables here (the session log added two, the memory fence a column);
// existing statements never change shape, so running the migration again on an older schema
// only creates what is missing.

/** Serialises concurrent migrations (two instances starting at once): an arbitrary constant. */
const MIGRATION_LOCK_KEY = 7_220_416_001;

export const SESSIONS_TABLE = 'turnkeep_sessions';
export const CONVERSATIONS_TABLE = 'turnkeep_conversations';
export const MESSAGES_TABLE = 'turnkeep_messages';
export const LOG_HEADS_TABLE = 'turnkeep_log_heads';
export const LOG_ITEMS_TABLE = 'turnkeep_log_items';

/**
 * The migration as one SQL text (several statements). Sent without parameters it runs as one
 * implicit transaction in both pg and postgres.js; the advisory lock makes a concurrent second
 * run wait instead of failing on a half-created table.
 */
export const MIGRATION_SQL = `-- turnkeep/postgres schema 3 (idempotent; 2 added the session log tables, 3 the memory fence)
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

-- The highest memory fence a save of the conversation was made under (null: none yet).
ALTER TABLE ${CONVERSATIONS_TABLE} ADD COLUMN IF NOT EXISTS fence bigint;

-- One row per message: no row grows with the conversation.
CREATE TABLE IF NOT EXISTS ${MESSAGES_TABLE} (
  scope      text    NOT NULL,
  session_id text    NOT NULL,
  position   integer NOT NULL,
  message    text    NOT NULL,
  PRIMARY KEY (scope, session_id, position)
);

-- The head of each session's log: version is what a commit compares, length the items it
-- holds, head the head's JSON text as turnkeep wrote it (producer fencing state).
CREATE TABLE IF NOT EXISTS ${LOG_HEADS_TABLE} (
  scope      text        NOT NULL,
  session_id text        NOT NULL,
  version    bigint      NOT NULL,
  length     bigint      NOT NULL,
  head       text        NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, session_id)
);

-- One row per chunk of a session's log, at positions 0..length-1.
CREATE TABLE IF NOT EXISTS ${LOG_ITEMS_TABLE} (
  scope      text   NOT NULL,
  session_id text   NOT NULL,
  position   bigint NOT NULL,
  item       text   NOT NULL,
  PRIMARY KEY (scope, session_id, position)
);
`;
