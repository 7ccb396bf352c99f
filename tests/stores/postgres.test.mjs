// turnkeep/postgres against a real PostgreSQL server (initdb'd and started once for this file),
// through both clients the adapter accepts: pg (node-postgres) and postgres.js.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import {
  createPostgresChatMemory,
  createPostgresSessionLog,
  createPostgresSessionStorage,
  migratePostgres,
  POSTGRES_MIGRATION_SQL,
} from '../../js/postgres.mjs';
import { postgresClient } from '../../js/stores/postgres/client.mjs';
import { LOG_SQL, postgresLogStore } from '../../js/stores/postgres/session-log.mjs';
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

/** The log store with `AND version = $7` taken out of its commit. */
const UNCHECKED_COMMIT = { ...LOG_SQL, update: LOG_SQL.update.replace('AND version = $7', 'AND $7::bigint IS NOT NULL') };

storeSuite({
  server: () => server,
  clients: POSTGRES_CLIENTS,
  sessionStorage: (client, scope) => createPostgresSessionStorage({ client, scope }),
  chatMemory: (client, scope, sessionId) => createPostgresChatMemory({ client, scope, sessionId }),
  sessionLog: (client, scope, sessionId) => createPostgresSessionLog({ client, scope, sessionId }),
  uncheckedLogStore: (client, scope, sessionId) => postgresLogStore(postgresClient('test', client).query, scope, sessionId, UNCHECKED_COMMIT),
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

test('the migration is exported as SQL text that creates the five tables', () => {
  for (const table of ['turnkeep_sessions', 'turnkeep_conversations', 'turnkeep_messages', 'turnkeep_log_heads', 'turnkeep_log_items']) {
    assert.match(POSTGRES_MIGRATION_SQL, new RegExp(`CREATE TABLE IF NOT EXISTS ${table} \\(`));
  }
});

test('a log with a missing item row fails the read instead of shifting later offsets', async (t) => {
  const { client, close } = await POSTGRES_CLIENTS['pg (Pool)'](server.url);
  t.after(close);
  const log = createPostgresSessionLog({ client, scope: 'holes', sessionId: 's1' });
  for (const value of [0, 1, 2]) await log.append([JSON.stringify({ type: 'CUSTOM', value })]);
  await client.query("DELETE FROM turnkeep_log_items WHERE scope = 'holes' AND position = 1");
  await assert.rejects(log.read({}), (error) => {
    assert.match(String(error.cause?.message ?? error.message), /position 1 is missing from the stored log/);
    return true;
  });
});

test('the log\'s first commit and its racing twin: one inserts the head, the other writes nothing', async (t) => {
  const { client, close } = await POSTGRES_CLIENTS['postgres (porsager)'](server.url);
  t.after(close);
  const store = postgresLogStore(postgresClient('test', client).query, 'first', 's1');
  const head = (n) => JSON.stringify({ version: 1, length: 1, producers: {}, n });
  const results = await Promise.all(Array.from({ length: 16 }, (_, n) => store.commit(null, [JSON.stringify({ n })], head(n))));
  assert.equal(results.filter(Boolean).length, 1);
  const winner = results.indexOf(true);
  assert.equal(await store.head(), head(winner));
  assert.deepEqual(await store.items(0, 10), [JSON.stringify({ n: winner })]);
});
