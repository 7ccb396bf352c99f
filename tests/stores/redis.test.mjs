// turnkeep/redis against a real redis-server (started once for this file), through every
// client shape the adapter accepts: node-redis v5 and v4, ioredis, and @upstash/redis over HTTP.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { createRedisChatMemory, createRedisSessionLog, createRedisSessionLogStore, createRedisSessionStorage } from '../../js/redis.mjs';
import { redisEval } from '../../js/stores/redis/client.mjs';
import { LOG_SCRIPTS, redisLogStore } from '../../js/stores/redis/session-log.mjs';
import { redisSessionStorage, SESSION_SCRIPTS } from '../../js/stores/redis/session-storage.mjs';
import { startRedis } from '../support/databases.mjs';
import { REDIS_CLIENTS } from './clients.mjs';
import { storeSuite } from './store-suite.mjs';

let server;
before(async () => {
  server = await startRedis();
});
after(() => server?.stop());

/** The adapter with its CAS script replaced by an unconditional write. */
const LAST_WRITE_WINS = { ...SESSION_SCRIPTS, save: "redis.call('HSET', KEYS[1], 'cursor', ARGV[2], 'envelope', ARGV[3]) return 1" };

/** The log store with its commit writing whatever the version (and the length check gone with it). */
const UNCHECKED_COMMIT = {
  ...LOG_SCRIPTS,
  commit: `
for i = 5, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'head', ARGV[3])
return 1`,
};

storeSuite({
  server: () => server,
  clients: REDIS_CLIENTS,
  sessionStorage: (client, prefix) => createRedisSessionStorage({ client, prefix }),
  chatMemory: (client, prefix, sessionId) => createRedisChatMemory({ client, prefix, sessionId }),
  sessionLog: (client, prefix, sessionId) => createRedisSessionLog({ client, prefix, sessionId }),
  uncheckedLogStore: (client, prefix, sessionId) =>
    redisLogStore(redisEval('test', client), { head: `${prefix}{${sessionId}}:log-head`, items: `${prefix}{${sessionId}}:log` }, UNCHECKED_COMMIT),
  lastWriteWins: (client, prefix) => redisSessionStorage(redisEval('test', client), (id) => `${prefix}{${id}}:session`, LAST_WRITE_WINS),
  // DEL, then one RPUSH per message: each command atomic, the save not.
  splitWriter(client, prefix, sessionId) {
    const run = redisEval('test', client);
    const key = `${prefix}{${sessionId}}:messages`;
    return {
      async save(messages) {
        await run("return redis.call('DEL', KEYS[1])", [key], []);
        for (const m of messages) await run("return redis.call('RPUSH', KEYS[1], ARGV[1])", [key], [JSON.stringify(m)]);
      },
    };
  },
});

test('the log keeps its keys beside the session\'s, under the session\'s hash tag', async (t) => {
  const { client, close } = await REDIS_CLIENTS['node-redis v5'](server.url);
  t.after(close);
  await createRedisSessionLog({ client, prefix: 'tag:', sessionId: 's1' }).append(['{"type":"CUSTOM"}']);
  assert.deepEqual((await client.keys('tag:*')).sort(), ['tag:{s1}:log', 'tag:{s1}:log-head']);
  assert.equal(await client.type('tag:{s1}:log'), 'list');
  assert.deepEqual(await client.hKeys('tag:{s1}:log-head'), ['version', 'head']);
});

test('a commit on a log whose item list disagrees with its head writes nothing and says so', async (t) => {
  const { client, close } = await REDIS_CLIENTS['node-redis v5'](server.url);
  t.after(close);
  const log = createRedisSessionLog({ client, prefix: 'evicted:', sessionId: 's1' });
  await log.append(['{"type":"CUSTOM","value":1}']);
  await client.del('evicted:{s1}:log'); // what an eviction policy or a hand edit can do
  const head = await client.hGet('evicted:{s1}:log-head', 'head');
  await assert.rejects(log.append(['{"type":"CUSTOM","value":2}']), (error) => {
    assert.match(String(error.cause?.message ?? error.message), /do not match the head's length/);
    return true;
  });
  assert.equal(await client.hGet('evicted:{s1}:log-head', 'head'), head, 'the head did not move');
  assert.equal(await client.exists('evicted:{s1}:log'), 0, 'no item was written');
  // And the store says it directly, to a caller of commit.
  const store = createRedisSessionLogStore({ client, prefix: 'evicted:', sessionId: 's1' });
  const next = JSON.stringify({ ...JSON.parse(head), version: 2, length: 2 });
  await assert.rejects(store.commit(1, ['{}'], next), /turnkeep\/redis sessionLog.commit: the stored items do not match/);
});
