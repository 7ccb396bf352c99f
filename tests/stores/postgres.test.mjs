// turnkeep/postgres against a real PostgreSQL server (initdb'd and started once for this file),
// through both clients the adapter accepts: pg (node-postgres) and postgres.js.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { createPostgresChatMemory, createPostgresSessionStorage, migratePostgres, POSTGRES_MIGRATION_SQL } from '../../js/postgres.mjs';
import { postgresClient } from '../../js/stores/postgres/client.mjs';
import { postgresSessionStorage, SESSION_SQL } from '../../js/stores/postgres/session-storage.mjs';
import { startPostgres } from '../support/databases.mjs';
import { POSTGRES_CLIENTS } from './clients.mjs';
import { storeSuite } from './store-suite.mjs';

let server;
before(async () => {
  server = await startPostgres();
  const { client, close } = await POSTGRES_CLIENTS['pg (Pool)'](server.url);
  try {
    await migratePostgres(client);
  } finally {
    await close();
  }
});
after(() => server?.stop());

/** The adapter with its CAS statements replaced by unconditional upserts. */
const UPSERT = `INSERT INTO turnkeep_sessions (scope, session_id, cursor, envelope) SELECT $1, $2, $3::bigint, $4
ON CONFLICT (scope, session_id) DO UPDATE SET cursor = excluded.cursor, envelope = excluded.envelope RETURNING cursor`;
const LAST_WRITE_WINS = { ...SESSION_SQL, create: UPSERT, update: UPSERT.replace('$4', '$4 WHERE $5::bigint IS NOT NULL') };

storeSuite({
  server: () => server,
  clients: POSTGRES_CLIENTS,
  sessionStorage: (client, scope) => createPostgresSessionStorage({ client, scope }),
  chatMemory: (client, scope, sessionId) => createPostgresChatMemory({ client, scope, sessionId }),
  lastWriteWins: (client, scope) => postgresSessionStorage(postgresClient('test', client).query, scope, LAST_WRITE_WINS),
  // One autocommitted statement per message, the count last: each statement atomic, the save not.
  splitWriter(client, scope, sessionId) {
    const { query } = postgresClient('test', client);
    return {
      async save(messages) {
        for (const [i, m] of messages.entries()) {
          await query(
            `INSERT INTO turnkeep_messages (scope, session_id, position, message) VALUES ($1, $2, $3, $4)
             ON CONFLICT (scope, session_id, position) DO UPDATE SET message = excluded.message`,
            [scope, sessionId, i, JSON.stringify(m)],
          );
        }
        await query(
          `INSERT INTO turnkeep_conversations (scope, session_id, message_count) VALUES ($1, $2, $3)
           ON CONFLICT (scope, session_id) DO UPDATE SET message_count = excluded.message_count`,
          [scope, sessionId, messages.length],
        );
      },
    };
  },
});

for (const kind of Object.keys(POSTGRES_CLIENTS)) {
  test(`${kind}: the migration runs again, and concurrently, as a no-op`, async (t) => {
    const { client, close } = await POSTGRES_CLIENTS[kind](server.url);
    t.after(close);
    await Promise.all([migratePostgres(client), migratePostgres(client), migratePostgres(client)]);
  });
}

test('the migration is exported as SQL text that creates the three tables', () => {
  for (const table of ['turnkeep_sessions', 'turnkeep_conversations', 'turnkeep_messages']) {
    assert.match(POSTGRES_MIGRATION_SQL, new RegExp(`CREATE TABLE IF NOT EXISTS ${table} \\(`));
  }
});
