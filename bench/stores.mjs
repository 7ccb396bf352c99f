// Benchmark of the durable stores (a script, not a test): `node bench/stores.mjs [turns]`.
// Needs pkg/ (bash scripts/build.sh), redis-server and PostgreSQL (scripts/setup.sh); starts
// both on loopback ports and stops them after. Prints, all measured in this one run, interleaved
// turn by turn so machine load hits every store alike:
//
// 1. One whole chat turn through createChatHandler (demo model, chunkDelayMs 0, a fresh
//    session per turn: session load, claim CAS, memory load, memory save, release CAS) with
//    in-memory storage, with turnkeep/redis (node-redis) and with turnkeep/postgres (pg Pool):
//    median and p90 in ms, and each median as a ratio of the in-memory one.
// 2. One session-storage CAS save alone, per store: median µs.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createClient } from 'redis';

import * as pkg from '../js/node.mjs';
import { createPostgresChatMemory, createPostgresSessionStorage, migratePostgres } from '../js/postgres.mjs';
import { createRedisChatMemory, createRedisSessionStorage } from '../js/redis.mjs';
import { conformanceSnapshot } from '../js/testing/session-storage-conformance.mjs';
import { chatRequest, readTurn, submitEvent } from '../tests/support/chat-harness.mjs';
import { startPostgres, startRedis } from '../tests/support/databases.mjs';

const TURNS = Number(process.argv[2] ?? 300);
const WARMUP_TURNS = 30;

const [redisServer, postgresServer] = await Promise.all([startRedis(), startPostgres()]);
const redis = createClient({ url: redisServer.url });
await redis.connect();
const pool = new pg.Pool({ connectionString: postgresServer.url, max: 4 });
await migratePostgres(pool);

const STORES = {
  memory: { storage: pkg.createMemorySessionStorage(), memory: () => pkg.createMemoryChatMemory() },
  redis: { storage: createRedisSessionStorage({ client: redis, prefix: 'bench:' }), memory: (id) => createRedisChatMemory({ client: redis, prefix: 'bench:', sessionId: id }) },
  postgres: { storage: createPostgresSessionStorage({ client: pool, scope: 'bench' }), memory: (id) => createPostgresChatMemory({ client: pool, scope: 'bench', sessionId: id }) },
};

const handlers = Object.fromEntries(
  Object.entries(STORES).map(([name, store]) => [
    name,
    pkg.createChatHandler({
      resolveDefinition: (_context, sessionId) =>
        pkg.defineChat({ id: 'bench', revision: 1, model: pkg.createDemoModel({ chunkDelayMs: 0 }), memory: store.memory(sessionId) }),
      sessionStorage: () => store.storage,
    }),
  ]),
);

async function timeTurn(name, n) {
  const t0 = performance.now();
  const response = await handlers[name](chatRequest(submitEvent({ sessionId: `${name}-${n}`, turnId: 't1', input: 'benchmark one durable turn' })));
  const { last } = await readTurn(pkg, response);
  const ms = performance.now() - t0;
  if (response.status !== 200 || last?.payload?.status !== 'complete') throw new Error(`${name} turn ${n} did not complete`);
  return ms;
}

async function timeSave(name, n) {
  const t0 = performance.now();
  const ok = await STORES[name].storage.save(conformanceSnapshot(`save-${n}`, 1, 't'), undefined);
  if (!ok) throw new Error(`${name} save ${n} conflicted`);
  return (performance.now() - t0) * 1000;
}

const samples = { turn: {}, save: {} };
for (const name of Object.keys(STORES)) {
  samples.turn[name] = [];
  samples.save[name] = [];
}
for (let n = 0; n < WARMUP_TURNS + TURNS; n += 1) {
  for (const name of Object.keys(STORES)) {
    const turnMs = await timeTurn(name, n);
    const saveUs = await timeSave(name, n);
    if (n >= WARMUP_TURNS) {
      samples.turn[name].push(turnMs);
      samples.save[name].push(saveUs);
    }
  }
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const base = quantile(samples.turn.memory, 0.5);
console.log(`one chat turn (${TURNS} per store, interleaved; fresh session each)`);
console.log('store     median ms   p90 ms   median / memory');
for (const name of Object.keys(STORES)) {
  const median = quantile(samples.turn[name], 0.5);
  console.log(`${name.padEnd(9)} ${median.toFixed(2).padStart(9)} ${quantile(samples.turn[name], 0.9).toFixed(2).padStart(8)} ${(median / base).toFixed(2).padStart(10)}x`);
}
console.log('\none CAS save (create) alone');
for (const name of Object.keys(STORES)) console.log(`${name.padEnd(9)} median ${quantile(samples.save[name], 0.5).toFixed(0).padStart(6)} µs`);

await redis.close();
await pool.end();
await Promise.all([redisServer.stop(), postgresServer.stop()]);
