// `turnkeep/postgres`: durable session storage and chat memory on PostgreSQL, for hosts outside
// Cloudflare. The host creates and owns the client (pg or postgres.js, see
// stores/postgres/client.mjs) and runs the migration once; these functions only send it
// single statements, so no transaction is ever left open on the host's pool.
//
// Rows are keyed by `(scope, session_id)`: give each app or tenant its own scope.

import { checkKeyPart, checkOptions, checkSessionOption, storeCall } from './stores/common.mjs';
import { postgresChatMemory } from './stores/postgres/chat-memory.mjs';
import { postgresClient } from './stores/postgres/client.mjs';
import { MIGRATION_SQL } from './stores/postgres/schema.mjs';
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

function readOptions(where, options) {
  const { client, scope = '' } = checkOptions(where, options);
  return { client, scope: checkKeyPart(where, 'scope', scope) };
}
