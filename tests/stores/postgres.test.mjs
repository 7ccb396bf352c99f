// turnkeep/postgres against a real PostgreSQL server (initdb'd and started once for this file),
// through both clients the adapter accepts: pg (node-postgres) and postgres.js.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { createPostgresChatMemory, createPostgresSessionStorage, migratePostgres, POSTGRES_MIGRATION_SQL } from '../../js/postgres.mjs';
import { postgresClient } from '../../js/stores/postgres/client.mjs';
import { postgresSessionStorage, SESSION_SQL } from '../../js/stores/postgres/session-storage.mjs';
import { CASES, checkSessionStorage } from '../../js/testing/session-storage-conformance.mjs';
import { startPostgres } from '../support/databases.mjs';
import { POSTGRES_CLIENTS } from './clients.mjs';
import { checkThenAct, checkWholeReads, conversation, RACE_CASES, WRITE_CASES } from './store-checks.mjs';

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

/** A client of `kind` for one test, closed after it. */
async function openClient(t, kind = 'pg (Pool)') {
  const { client, close } = await POSTGRES_CLIENTS[kind](server.url);
  t.after(close);
  return client;
}

let scopes = 0;
/** A scope no other storage in this file uses: each conformance case starts empty. */
const freshScope = (label) => `t${++scopes}-${label}`;

for (const kind of Object.keys(POSTGRES_CLIENTS)) {
  test(`${kind}: session storage passes the conformance suite (32 racing saves, one winner)`, async (t) => {
    const client = await openClient(t, kind);
    const report = await checkSessionStorage(() => createPostgresSessionStorage({ client, scope: freshScope(kind) }));
    assert.deepEqual(report.failed, []);
    assert.deepEqual(report.passed, Object.values(CASES));
  });

  test(`${kind}: chat memory keeps one session's messages, replaced whole by each save`, async (t) => {
    const client = await openClient(t, kind);
    const scope = freshScope(kind);
    const memory = createPostgresChatMemory({ client, scope, sessionId: 's1' });
    const other = createPostgresChatMemory({ client, scope, sessionId: 's2' });
    assert.deepEqual(await memory.load(), [], 'a session never saved has no messages');
    const long = conversation('long', 1_200);
    await memory.save(long, {});
    assert.deepEqual(await memory.load({}), long);
    const short = conversation('short', 2);
    await memory.save(short);
    assert.deepEqual(await memory.load(), short, 'a shorter save leaves no rows of the longer one');
    assert.deepEqual(await other.load(), [], 'sessions do not share messages');
    await memory.save([]);
    assert.deepEqual(await memory.load(), []);
  });

  test(`${kind}: the migration runs again, and concurrently, as a no-op`, async (t) => {
    const client = await openClient(t, kind);
    await Promise.all([migratePostgres(client), migratePostgres(client), migratePostgres(client)]);
  });
}

/** The adapter with its CAS statements replaced by unconditional upserts. */
const UPSERT = `INSERT INTO turnkeep_sessions (scope, session_id, cursor, envelope) SELECT $1, $2, $3::bigint, $4
ON CONFLICT (scope, session_id) DO UPDATE SET cursor = excluded.cursor, envelope = excluded.envelope RETURNING cursor`;
const LAST_WRITE_WINS = { ...SESSION_SQL, create: UPSERT, update: UPSERT.replace('SELECT $1, $2, $3::bigint, $4', 'SELECT $1, $2, $3::bigint, $4 WHERE $5::bigint IS NOT NULL') };
function lastWriteWins(client, scope) {
  return postgresSessionStorage(postgresClient('test', client).query, scope, LAST_WRITE_WINS);
}

test('last-write-wins statements on the same server fail the conformance suite', async (t) => {
  const client = await openClient(t);
  const report = await checkSessionStorage(() => lastWriteWins(client, freshScope('lww')));
  assert.deepEqual(report.failed.map((f) => f.name), WRITE_CASES);
  assert.match(report.failed.at(-1).detail, /32 of 32 savers won/);
});

test('read-then-write over two round trips fails the races on a real server', async (t) => {
  const client = await openClient(t);
  const report = await checkSessionStorage(() => {
    const scope = freshScope('cta');
    return checkThenAct(createPostgresSessionStorage({ client, scope }), lastWriteWins(client, scope));
  });
  assert.deepEqual(report.failed.map((f) => f.name), RACE_CASES);
  assert.match(report.failed.at(-1).detail, /\d+ of 32 savers won/);
});

test('a reader on another connection sees a whole conversation, never part of a save', async (t) => {
  const scope = freshScope('atomic');
  const writer = createPostgresChatMemory({ client: await openClient(t, 'pg (Pool)'), scope, sessionId: 's' });
  const reader = createPostgresChatMemory({ client: await openClient(t, 'postgres (porsager)'), scope, sessionId: 's' });
  const loads = await checkWholeReads(writer, reader, [conversation('a', 400), conversation('b', 3), conversation('c', 150)], 30);
  assert.ok(loads > 0, 'the reader loaded while the writer saved');
});

test('the whole-read check catches a save written in several statements', async (t) => {
  const scope = freshScope('split');
  const { query } = postgresClient('test', await openClient(t, 'pg (Pool)'));
  const reader = createPostgresChatMemory({ client: await openClient(t, 'postgres (porsager)'), scope, sessionId: 's' });
  const splitWriter = {
    async save(messages) {
      for (const [i, m] of messages.entries()) {
        await query(
          `INSERT INTO turnkeep_messages (scope, session_id, position, message) VALUES ($1, 's', $2, $3)
           ON CONFLICT (scope, session_id, position) DO UPDATE SET message = excluded.message`,
          [scope, i, JSON.stringify(m)],
        );
      }
      await query(
        `INSERT INTO turnkeep_conversations (scope, session_id, message_count) VALUES ($1, 's', $2)
         ON CONFLICT (scope, session_id) DO UPDATE SET message_count = excluded.message_count`,
        [scope, messages.length],
      );
    },
  };
  await assert.rejects(checkWholeReads(splitWriter, reader, [conversation('a', 200), conversation('b', 3)], 6), /no saved version|Expected values/);
});

test('the migration is exported as SQL text that creates the three tables', () => {
  for (const table of ['turnkeep_sessions', 'turnkeep_conversations', 'turnkeep_messages']) {
    assert.match(POSTGRES_MIGRATION_SQL, new RegExp(`CREATE TABLE IF NOT EXISTS ${table} \\(`));
  }
});
