// turnkeep/redis against a real redis-server (started once for this file), through every
// client shape the adapter accepts: node-redis v5 and v4, ioredis, and @upstash/redis over HTTP.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { createRedisChatMemory, createRedisSessionStorage } from '../../js/redis.mjs';
import { redisEval } from '../../js/stores/redis/client.mjs';
import { redisSessionStorage, SESSION_SCRIPTS } from '../../js/stores/redis/session-storage.mjs';
import { CASES, checkSessionStorage } from '../../js/testing/session-storage-conformance.mjs';
import { startRedis } from '../support/databases.mjs';
import { REDIS_CLIENTS } from './clients.mjs';
import { checkThenAct, checkWholeReads, conversation, RACE_CASES, WRITE_CASES } from './store-checks.mjs';

let server;
before(async () => {
  server = await startRedis();
});
after(() => server?.stop());

/** A client of `kind` for one test, closed after it. */
async function openClient(t, kind = 'node-redis v5') {
  const { client, close } = await REDIS_CLIENTS[kind](server.url);
  t.after(close);
  return client;
}

let prefixes = 0;
/** A prefix no other storage in this file uses: each conformance case starts empty. */
const freshPrefix = (label) => `t${++prefixes}-${label.replace(/[^a-z0-9]/gi, '')}:`;

for (const kind of Object.keys(REDIS_CLIENTS)) {
  test(`${kind}: session storage passes the conformance suite (32 racing saves, one winner)`, async (t) => {
    const client = await openClient(t, kind);
    const report = await checkSessionStorage(() => createRedisSessionStorage({ client, prefix: freshPrefix(kind) }));
    assert.deepEqual(report.failed, []);
    assert.deepEqual(report.passed, Object.values(CASES));
  });

  test(`${kind}: chat memory keeps one session's messages, replaced whole by each save`, async (t) => {
    const client = await openClient(t, kind);
    const prefix = freshPrefix(kind);
    const memory = createRedisChatMemory({ client, prefix, sessionId: 's1' });
    const other = createRedisChatMemory({ client, prefix, sessionId: 's2' });
    assert.deepEqual(await memory.load(), [], 'a session never saved has no messages');
    const long = conversation('long', 1_200); // more rows than one RPUSH call takes
    await memory.save(long, {});
    assert.deepEqual(await memory.load({}), long);
    const short = conversation('short', 2);
    await memory.save(short);
    assert.deepEqual(await memory.load(), short, 'a shorter save leaves no rows of the longer one');
    assert.deepEqual(await other.load(), [], 'sessions do not share messages');
    await memory.save([]);
    assert.deepEqual(await memory.load(), []);
  });
}

/** The adapter with its CAS script replaced by an unconditional write. */
const LAST_WRITE_WINS = { ...SESSION_SCRIPTS, save: "redis.call('HSET', KEYS[1], 'cursor', ARGV[2], 'envelope', ARGV[3]) return 1" };
function lastWriteWins(client, prefix) {
  return redisSessionStorage(redisEval('test', client), (id) => `${prefix}{${id}}:session`, LAST_WRITE_WINS);
}

test('a last-write-wins script on the same server fails the conformance suite', async (t) => {
  const client = await openClient(t);
  const report = await checkSessionStorage(() => lastWriteWins(client, freshPrefix('lww')));
  assert.deepEqual(report.failed.map((f) => f.name), WRITE_CASES);
  assert.match(report.failed.at(-1).detail, /32 of 32 savers won/);
});

test('read-then-write over two round trips fails the races on a real server', async (t) => {
  const client = await openClient(t);
  const report = await checkSessionStorage(() => {
    const prefix = freshPrefix('cta');
    return checkThenAct(createRedisSessionStorage({ client, prefix }), lastWriteWins(client, prefix));
  });
  assert.deepEqual(report.failed.map((f) => f.name), RACE_CASES);
  assert.match(report.failed.at(-1).detail, /32 of 32 savers won/);
});

test('a reader on another connection sees a whole conversation, never part of a save', async (t) => {
  const prefix = freshPrefix('atomic');
  const writer = createRedisChatMemory({ client: await openClient(t, 'node-redis v5'), prefix, sessionId: 's' });
  const reader = createRedisChatMemory({ client: await openClient(t, 'ioredis'), prefix, sessionId: 's' });
  const loads = await checkWholeReads(writer, reader, [conversation('a', 400), conversation('b', 3), conversation('c', 150)], 30);
  assert.ok(loads > 0, 'the reader loaded while the writer saved');
});

test('the whole-read check catches a save written in several commands', async (t) => {
  const prefix = freshPrefix('split');
  const key = `${prefix}{s}:messages`;
  const run = redisEval('test', await openClient(t, 'node-redis v5'));
  const reader = createRedisChatMemory({ client: await openClient(t, 'ioredis'), prefix, sessionId: 's' });
  const splitWriter = {
    async save(messages) {
      await run("return redis.call('DEL', KEYS[1])", [key], []);
      for (const m of messages) await run("return redis.call('RPUSH', KEYS[1], ARGV[1])", [key], [JSON.stringify(m)]);
    },
  };
  await assert.rejects(checkWholeReads(splitWriter, reader, [conversation('a', 200), conversation('b', 3)], 6), /no saved version/);
});
