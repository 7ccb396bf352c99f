// The database connection dies in the middle of a turn (killed from the server side: Redis
// CLIENT KILL, PostgreSQL pg_terminate_backend). With a client that does not reconnect, the
// turn ends with a versioned diagnostic, nothing of it is saved (the history read back is the
// one before it, whole and valid), and its lease still expires, after which the session takes
// turns again. The session log (every turn is published to it) reads back as whole chunks
// that project to no more than was sent, and once the next turn re-syncs it, it projects to
// the saved messages again. With a client that reconnects, the same kill costs nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import postgres from 'postgres';
import { createClient } from 'redis';

import * as pkg from '../../js/node.mjs';
import { createPostgresChatMemory, createPostgresSessionLog, createPostgresSessionStorage, migratePostgres } from '../../js/postgres.mjs';
import { createRedisChatMemory, createRedisSessionLog, createRedisSessionStorage } from '../../js/redis.mjs';
import { chatRequest, DIAGNOSTIC, readTurn, sleep, SNAPSHOT, submitEvent } from '../support/chat-harness.mjs';
import { startPostgres, startRedis } from '../support/databases.mjs';

/** Short budgets so the lease (timeout + 3 × cleanup = 2.1 s) expires within the test. */
const HANDLER_TIMING = { timeoutMs: 1_500, cleanupTimeoutMs: 200 };
/**
 * The healthy handler's: its turns never need to expire, and a cleanup that waits for the last
 * log appends gets room on a loaded machine (200 ms can run out, and the turn is then recorded
 * `indeterminate`, as it should be).
 */
const HEALTHY_TIMING = { timeoutMs: 5_000, cleanupTimeoutMs: 5_000 };

const servers = {};
before(async () => {
  [servers.redis, servers.postgres] = await Promise.all([startRedis(), startPostgres()]);
  const admin = new pg.Client(servers.postgres.url);
  await admin.connect();
  await migratePostgres(admin);
  await admin.end();
});
after(() => Promise.all(Object.values(servers).map((s) => s.stop())));

/** Per database: a client that never reconnects, one that does, and how to kill a client's connection. */
const DATABASES = {
  redis: {
    async open(t, { reconnect }) {
      const client = createClient({ url: servers.redis.url, socket: reconnect ? {} : { reconnectStrategy: false } });
      client.on('error', () => {}); // the kill is expected; the failed commands are what is checked
      await client.connect();
      const id = await client.clientId();
      t.after(() => client.isOpen && client.close());
      return { client, kill: () => adminRedis(['CLIENT', 'KILL', 'ID', String(id)]) };
    },
    stores: (client, sessionId, prefix) => ({
      storage: createRedisSessionStorage({ client, prefix }),
      memory: createRedisChatMemory({ client, prefix, sessionId }),
      log: createRedisSessionLog({ client, prefix, sessionId }),
    }),
  },
  postgres: {
    async open(t, { reconnect }) {
      // pg.Client is one connection and never reconnects; postgres.js opens a new one on demand.
      const client = reconnect ? postgres(servers.postgres.url, { max: 1, onnotice: () => {} }) : new pg.Client(servers.postgres.url);
      if (reconnect) {
        t.after(() => client.end({ timeout: 1 }));
      } else {
        client.on('error', () => {});
        await client.connect();
        t.after(() => client.end().catch(() => {}));
      }
      const pidOf = async () => (reconnect ? (await client`select pg_backend_pid() as pid`)[0].pid : (await client.query('select pg_backend_pid() as pid')).rows[0].pid);
      const pid = await pidOf();
      return { client, kill: () => adminPostgres(pid) };
    },
    stores: (client, sessionId, scope) => ({
      storage: createPostgresSessionStorage({ client, scope }),
      memory: createPostgresChatMemory({ client, scope, sessionId }),
      log: createPostgresSessionLog({ client, scope, sessionId }),
    }),
  },
};

async function adminRedis(command) {
  const admin = createClient({ url: servers.redis.url });
  await admin.connect();
  try {
    assert.equal(await admin.sendCommand(command), 1, 'one connection was killed');
  } finally {
    await admin.close();
  }
}

async function adminPostgres(pid) {
  const admin = new pg.Client(servers.postgres.url);
  await admin.connect();
  try {
    const { rows } = await admin.query('select pg_terminate_backend($1) as killed', [pid]);
    assert.equal(rows[0].killed, true, 'the backend was terminated');
  } finally {
    await admin.end();
  }
}

/** A chat handler (demo model) whose stores go through `client`. */
function handlerOver(db, client, namespace, timing = HANDLER_TIMING) {
  return pkg.createChatHandler({
    resolveDefinition: (_context, sessionId) =>
      pkg.defineChat({
        id: 'demo',
        revision: 1,
        model: pkg.createDemoModel({ chunkDelayMs: 15 }),
        memory: db.stores(client, sessionId, namespace).memory,
      }),
    sessionStorage: () => db.stores(client, 's', namespace).storage,
    sessionLog: (_context, sessionId) => db.stores(client, sessionId, namespace).log,
    ...timing,
  });
}

async function turn(handler, turnId, input, options) {
  const response = await handler(chatRequest(submitEvent({ sessionId: 's', turnId, input })));
  if (response.status !== 200) return { status: response.status, body: await response.json() };
  return { status: 200, ...(await readTurn(pkg, response, options)) };
}

for (const [name, db] of Object.entries(DATABASES)) {
  test(`${name}: a connection killed mid-turn gives a diagnostic, saves nothing half-way, and the lease still expires`, async (t) => {
    const namespace = `loss-${name}`;
    const healthy = await db.open(t, { reconnect: true });
    const fresh = handlerOver(db, healthy.client, namespace, HEALTHY_TIMING);
    const first = await turn(fresh, 't1', 'hello');
    assert.equal(first.last.payload.status, 'complete');
    const history = first.last.payload.messages;

    const victim = await db.open(t, { reconnect: false });
    const killed = await turn(handlerOver(db, victim.client, namespace), 't2', '/words 30', {
      onLine: async (_event, n) => n === 1 && victim.kill(),
    });
    assert.equal(killed.status, 200, 'the turn had started');
    assert.deepEqual(killed.faults, []);
    assert.ok(killed.snapshots.length >= 1);
    assert.equal(killed.last.event, DIAGNOSTIC, 'the stream ends with a diagnostic');
    assert.deepEqual(killed.last.payload, { version: 1, code: 'SERVER_INTERNAL', message: 'The chat request failed.', retryable: true });
    assert.doesNotMatch(killed.text, /turnkeep\/(redis|postgres)|closed|terminat/i, 'no internal error text reaches the client');

    // Read back over a healthy connection: a valid envelope still holding t2's lease, and the
    // history from before t2, whole, and t2's user message (saved before its answer started).
    const { storage, memory, log } = db.stores(healthy.client, 's', namespace);
    const stored = pkg.decodeSessionSnapshot(await storage.load('s'));
    assert.equal(stored.ok, true, JSON.stringify(stored.diagnostic));
    assert.equal(stored.snapshot.activeTurn?.turnId, 't2');
    const kept = await memory.load();
    assert.deepEqual(kept.slice(0, history.length), history);
    assert.deepEqual(kept.slice(history.length).map((m) => [m.role, m.content]), [['user', '/words 30']]);
    // The log holds whole chunks: the history, then as much of t2 as was sent before the kill.
    const cut = await pkg.resolveChatSnapshot({ target: log });
    assert.deepEqual(cut.messages.slice(0, 2), history);
    assert.ok(cut.messages.length <= 4, `${cut.messages.length} messages`);
    if (cut.messages.length === 4) assert.match(cut.messages[3].content, /^(w\d+( w\d+)*)?$/);

    const busy = await turn(fresh, 't3', 'anyone?');
    assert.equal(busy.status, 409);
    assert.equal(busy.body.error.code, 'SESSION_BUSY');

    await sleep(Math.max(0, stored.snapshot.activeTurn.expiresAt - Date.now()) + 50);
    const resumed = await turn(fresh, 't4', 'back again');
    assert.equal(resumed.status, 200, 'the expired lease is claimed');
    assert.equal(resumed.last.event, SNAPSHOT);
    assert.equal(resumed.last.payload.status, 'complete');
    assert.deepEqual(resumed.last.payload.messages.slice(0, 2), history);
    assert.deepEqual(await memory.load(), resumed.last.payload.messages);
    const final = pkg.decodeSessionSnapshot(await storage.load('s'));
    assert.equal(final.snapshot.activeTurn, undefined);
    // t2's lease lapsed and was taken over: nobody knows how it ended, so it is indeterminate.
    assert.deepEqual(final.snapshot.terminalTurns.map((x) => [x.turnId, x.outcome]),
      [['t1', 'completed'], ['t2', 'indeterminate'], ['t4', 'completed']]);
    const synced = await pkg.resolveChatSnapshot({ target: log });
    assert.deepEqual(synced.messages, resumed.last.payload.messages, 'the next turn re-synced the log');
  });

  test(`${name}: a client that reconnects carries the turn over the same kill`, async (t) => {
    const namespace = `heal-${name}`;
    const victim = await db.open(t, { reconnect: true });
    const handler = handlerOver(db, victim.client, namespace, HEALTHY_TIMING);
    const healed = await turn(handler, 't1', '/words 20', { onLine: async (_event, n) => n === 1 && victim.kill() });
    assert.equal(healed.last.event, SNAPSHOT);
    assert.equal(healed.last.payload.status, 'complete');
    const { storage, memory, log } = db.stores(victim.client, 's', namespace);
    assert.deepEqual(await memory.load(), healed.last.payload.messages);
    assert.deepEqual((await pkg.resolveChatSnapshot({ target: log })).messages, healed.last.payload.messages);
    const { snapshot } = pkg.decodeSessionSnapshot(await storage.load('s'));
    assert.equal(snapshot.activeTurn, undefined);
    assert.deepEqual(snapshot.terminalTurns.map((x) => x.outcome), ['completed'], 'messages and log both whole');
  });
}
