// `turnkeep/postgres`: durable session storage, chat memory and session logs on PostgreSQL,
// for hosts outside Cloudflare. The host creates and owns the client (pg or postgres.js, see
// stores/postgres/client.mjs) and runs the migration once; these functions only send it
// single statements, so no transaction is ever left open on the host's pool.
//
// Rows are keyed by `(scope, session_id)`: give each app or tenant its own scope.

// The session log is decided in Rust (createStoreSessionLog): the package's own entry, loaded
// by name so each runtime gets its own (node, workerd, browser).
import { createStoreSessionLog } from 'turnkeep';

import { checkKeyPart, checkOptions, checkSessionOption, storeCall } from './stores/common.mjs';
import { postgresChatMemory } from './stores/postgres/chat-memory.mjs';
import { postgresClient } from './stores/postgres/client.mjs';
import { MIGRATION_SQL } from './stores/postgres/schema.mjs';
import { postgresLogStore } from './stores/postgres/session-log.mjs';
import { postgresSessionStorage } from './stores/postgres/session-storage.mjs';

/** The migration as SQL text, for hosts that run migrations with their own tool. Idempotent. */
export const POSTGRES_MIGRATION_SQL = MIGRATION_SQL;

/**
 * Creates the tables if they do not exist (safe to run at every start; concurrent runs wait
 * for each other).
 * @param {object} client a pg Pool/Client or a postgres.js sql
 */
export async function migratePostgres(client) {
  const { script } = postgresClient('migratePostgres', client);
  // No parameters: both clients send it as one simple query, which runs as one transaction.
  await storeCall('turnkeep/postgres migrate', () => script(MIGRATION_SQL));
}

/**
 * Session storage with an atomic compare-and-set (a conditional UPDATE, or an INSERT that does
 * nothing on conflict for the first save).
 * @param {{ client: object, scope?: string }} options  `scope` (default '') keeps apps or tenants apart
 */
export function createPostgresSessionStorage(options) {
  const where = 'createPostgresSessionStorage';
  const { client, scope } = readOptions(where, options);
  return postgresSessionStorage(postgresClient(where, client).query, scope);
}

/**
 * The canonical messages of one session (rows replaced by one statement per save). Create one
 * per session in `resolveDefinition(context, sessionId)`; it is a few closures, cheap to make.
 * @param {{ client: object, sessionId: string, scope?: string }} options
 */
export function createPostgresChatMemory(options) {
  const where = 'createPostgresChatMemory';
  const { client, scope } = readOptions(where, options);
  const sessionId = checkSessionOption(where, options.sessionId);
  return postgresChatMemory(postgresClient(where, client).query, scope, sessionId);
}

/**
 * The item store of one session's log: `{ head, commit, items }`, with `commit` one statement
 * (move the head row `WHERE version = $expected`, insert the items from what it returned). For
 * `createStoreSessionLog`, or use `createPostgresSessionLog`, which is exactly that.
 * @param {{ client: object, sessionId: string, scope?: string }} options
 */
export function createPostgresSessionLogStore(options) {
  const where = 'createPostgresSessionLogStore';
  const { client, scope } = readOptions(where, options);
  const sessionId = checkSessionOption(where, options.sessionId);
  return postgresLogStore(postgresClient(where, client).query, scope, sessionId);
}

/**
 * One session's durable log on Postgres (tables turnkeep_log_heads, turnkeep_log_items), for
 * `createChatHandler({ sessionLog })`: appends fenced by producer `(id, epoch, seq)` exactly as
 * every turnkeep log (decided in Rust), reads from an offset, long-poll by polling the head.
 * Cheap to create per request.
 * @param {{ client: object, sessionId: string, scope?: string }} options
 */
export function createPostgresSessionLog(options) {
  return createStoreSessionLog({ store: createPostgresSessionLogStore(options) });
}

function readOptions(where, options) {
  const { client, scope = '' } = checkOptions(where, options);
  return { client, scope: checkKeyPart(where, 'scope', scope) };
}
