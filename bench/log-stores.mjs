// Benchmark of the session logs on Redis and Postgres (a script, not a test):
// `node bench/log-stores.mjs [turns]`. Needs pkg/ (bash scripts/build.sh), redis-server and
// PostgreSQL (scripts/setup.sh); starts both on loopback ports and stops them after. Everything
// below is measured in this one run, store after store within each round, so machine load hits
// every store alike:
//
// 1. One whole chat turn (demo model `/words 40`, chunkDelayMs 0, a fresh session per turn)
//    through createChatHandler on the store's SessionStorage and ChatMemory, without a session
//    log and with the store's own log (the in-memory log as a reference): median ms, and the
//    cost of publishing as a ratio of the turn without a log.
// 2. One fenced append of one chunk alone, per log: median µs; and the same through a new log
//    object per append, which knows no head yet and reads it first (two round trips instead of
//    one: what every append cost before the log remembered the head it wrote).
// 3. A stop across instances: handler A runs `/words 400` (chunkDelayMs 10); handler B, on its
//    own connection, answers `client.turn.stop`; the time from B's 202 to the end of A's
//    response: median and p90 ms. The log has no change notification, so A's stop watcher polls
//    the head every LOG_POLL_INTERVAL_MS (50 ms); the model's next chunk adds up to 10 ms.
// 4. What that polling costs the database: the store calls a turn makes per second while it
//    runs (`/words 100`, chunkDelayMs 20: ~2 s). The publisher commits once per append (it
//    decides on the head it wrote last); head reads are the stop watcher's long-poll polls
//    (and the publisher's first append), item reads the watcher's reads of new chunks.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createClient } from 'redis';

import * as pkg from '../js/node.mjs';
import {
  createPostgresChatMemory,
  createPostgresSessionLogStore,
  createPostgresSessionStorage,
  migratePostgres,
} from '../js/postgres.mjs';
import { createRedisChatMemory, createRedisSessionLogStore, createRedisSessionStorage } from '../js/redis.mjs';
import { chatRequest, readTurn, submitEvent } from '../tests/support/chat-harness.mjs';
import { startPostgres, startRedis } from '../tests/support/databases.mjs';

const TURNS = Number(process.argv[2] ?? 60);
const WARMUP = 5;
const APPENDS = TURNS * 5;
const STOPS = Math.max(5, Math.floor(TURNS / 4));

const [redisServer, postgresServer] = await Promise.all([startRedis(), startPostgres()]);
const connections = [];
async function redisConnection() {
  const client = createClient({ url: redisServer.url });
  await client.connect();
  connections.push(() => client.close());
  return client;
}
function postgresConnection() {
  const pool = new pg.Pool({ connectionString: postgresServer.url, max: 4 });
  pool.on('error', () => {}); // an idle connection ended by the server's shutdown
  connections.push(() => pool.end());
  return pool;
}
await migratePostgres(postgresConnection());

/** Per store, on one connection: storage, memory(sessionId), logStore(sessionId) and a call counter. */
function storeOn(name, client) {
  const counted = (store) => ({
    head: (options) => (calls.head++, store.head(options)),
    commit: (...args) => (calls.commit++, store.commit(...args)),
    items: (...args) => (calls.items++, store.items(...args)),
  });
  const calls = { head: 0, commit: 0, items: 0 };
  if (name === 'redis') {
    return {
      calls,
      storage: createRedisSessionStorage({ client, prefix: 'bench:' }),
      memory: (id) => createRedisChatMemory({ client, prefix: 'bench:', sessionId: id }),
      log: (id) => pkg.createStoreSessionLog({ store: counted(createRedisSessionLogStore({ client, prefix: 'bench:', sessionId: id })) }),
    };
  }
  return {
    calls,
    storage: createPostgresSessionStorage({ client, scope: 'bench' }),
    memory: (id) => createPostgresChatMemory({ client, scope: 'bench', sessionId: id }),
    log: (id) => pkg.createStoreSessionLog({ store: counted(createPostgresSessionLogStore({ client, scope: 'bench', sessionId: id })) }),
  };
}

const stores = {
  redis: [storeOn('redis', await redisConnection()), storeOn('redis', await redisConnection())],
  postgres: [storeOn('postgres', postgresConnection()), storeOn('postgres', postgresConnection())],
};

/** A handler on `store`; `log`: 'none' | 'memory' | 'store'. */
function handlerOn(store, log, chunkDelayMs) {
  const memoryLogs = new Map();
  const sessionLog = {
    none: undefined,
    memory: (_c, id) => memoryLogs.get(id) ?? memoryLogs.set(id, pkg.createMemorySessionLog()).get(id),
    store: (_c, id) => store.log(id),
  }[log];
  return pkg.createChatHandler({
    resolveDefinition: (_c, id) => pkg.defineChat({ id: 'bench', revision: 1, model: pkg.createDemoModel({ chunkDelayMs }), memory: store.memory(id) }),
    sessionStorage: () => store.storage,
    ...(sessionLog ? { sessionLog } : {}),
  });
}

let sessions = 0;
const fresh = (tag) => `${tag}-${process.pid}-${++sessions}`;

async function timeTurn(handler, input) {
  const t0 = performance.now();
  const response = await handler(chatRequest(submitEvent({ sessionId: fresh('turn'), turnId: 't1', input })));
  const { last } = await readTurn(pkg, response);
  if (last?.payload?.status !== 'complete') throw new Error(`the turn ended ${JSON.stringify(last?.payload?.status)}`);
  return performance.now() - t0;
}

async function timeAppend(log, seq) {
  const t0 = performance.now();
  await log.append([JSON.stringify({ type: 'CUSTOM', name: 'bench', value: seq })], { producer: { id: 'bench', epoch: 0, seq } });
  return (performance.now() - t0) * 1000;
}

/** A runs a long turn; B stops it; ms from B's answer to the end of A's response. */
async function timeStop(a, b) {
  const sessionId = fresh('stop');
  const running = await a(chatRequest(submitEvent({ sessionId, turnId: 't1', input: '/words 400' })));
  const reader = running.body.getReader();
  await reader.read();
  const stop = await b(chatRequest({ ...submitEvent({ sessionId, turnId: 't1' }), eventId: 'stop', event: 'client.turn.stop', payload: {} }));
  if (stop.status !== 202) throw new Error(`stop answered ${stop.status}`);
  const t0 = performance.now();
  while (!(await reader.read()).done);
  return performance.now() - t0;
}

/** Store calls per second of a ~2 s turn, split into the publisher's and the rest. */
async function callsPerSecond(store) {
  const before = { ...store.calls };
  const ms = await timeTurn(handlerOn(store, 'store', 20), '/words 100');
  const delta = Object.fromEntries(Object.keys(before).map((k) => [k, store.calls[k] - before[k]]));
  const perSecond = (n) => n / (ms / 1000);
  return { commits: perSecond(delta.commit), heads: perSecond(delta.head), items: perSecond(delta.items), ms };
}

const samples = {};
const sample = (key, value) => (samples[key] ??= []).push(value);
const handlers = Object.fromEntries(
  Object.entries(stores).map(([name, [a, b]]) => [
    name,
    { none: handlerOn(a, 'none', 0), memory: handlerOn(a, 'memory', 0), store: handlerOn(a, 'store', 0), stopA: handlerOn(a, 'store', 10), stopB: handlerOn(b, 'store', 10) },
  ]),
);

for (let n = 0; n < WARMUP + TURNS; n += 1) {
  for (const name of Object.keys(stores)) {
    for (const log of ['none', 'memory', 'store']) {
      const ms = await timeTurn(handlers[name][log], '/words 40');
      if (n >= WARMUP) sample(`turn ${name} ${log}`, ms);
    }
  }
}
const appendSessions = { redis: fresh('append'), postgres: fresh('append'), redisNew: fresh('append'), postgresNew: fresh('append') };
const appendLogs = {
  memory: () => appendLogs.memoryLog,
  memoryLog: pkg.createMemorySessionLog(),
  redis: () => appendLogs.redisLog,
  redisLog: stores.redis[0].log(appendSessions.redis),
  postgres: () => appendLogs.postgresLog,
  postgresLog: stores.postgres[0].log(appendSessions.postgres),
  'redis, new log each': () => stores.redis[0].log(appendSessions.redisNew),
  'postgres, new log each': () => stores.postgres[0].log(appendSessions.postgresNew),
};
const APPEND_VARIANTS = ['memory', 'redis', 'redis, new log each', 'postgres', 'postgres, new log each'];
for (let seq = 0; seq < APPENDS; seq += 1) {
  for (const name of APPEND_VARIANTS) {
    const us = await timeAppend(appendLogs[name](), seq);
    if (seq >= WARMUP) sample(`append ${name}`, us);
  }
}
for (let n = 0; n < STOPS; n += 1) {
  for (const name of Object.keys(stores)) sample(`stop ${name}`, await timeStop(handlers[name].stopA, handlers[name].stopB));
}
const load = {};
for (const name of Object.keys(stores)) load[name] = await callsPerSecond(stores[name][0]);

const quantile = (values, q) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const median = (key) => quantile(samples[key], 0.5);

console.log(`1. one chat turn, /words 40 (${TURNS} per variant, interleaved; fresh session each)`);
console.log('store     no log ms   memory log ms   store log ms   store log / no log');
for (const name of Object.keys(stores)) {
  const [none, memory, store] = ['none', 'memory', 'store'].map((log) => median(`turn ${name} ${log}`));
  console.log(`${name.padEnd(9)} ${none.toFixed(2).padStart(9)} ${memory.toFixed(2).padStart(15)} ${store.toFixed(2).padStart(14)} ${(store / none).toFixed(2).padStart(19)}x`);
}
console.log(`\n2. one fenced append of one chunk (${APPENDS} per log)`);
for (const name of APPEND_VARIANTS) console.log(`${name.padEnd(22)} median ${median(`append ${name}`).toFixed(0).padStart(6)} µs`);
console.log(`\n3. client.turn.stop to handler B -> end of handler A's response (${STOPS} per store; polling every 50 ms, a chunk every 10 ms)`);
for (const name of Object.keys(stores)) {
  console.log(`${name.padEnd(9)} median ${median(`stop ${name}`).toFixed(1).padStart(6)} ms   p90 ${quantile(samples[`stop ${name}`], 0.9).toFixed(1).padStart(6)} ms`);
}
console.log('\n4. store calls per second during one ~2 s turn (/words 100, a chunk every 20 ms)');
for (const [name, l] of Object.entries(load)) {
  console.log(`${name.padEnd(9)} commits ${l.commits.toFixed(1)}/s   head reads ${l.heads.toFixed(1)}/s   item reads ${l.items.toFixed(1)}/s   (turn ${l.ms.toFixed(0)} ms)`);
}

for (const close of connections) await close();
await Promise.all([redisServer.stop(), postgresServer.stop()]);
