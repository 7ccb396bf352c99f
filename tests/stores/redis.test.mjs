// turnkeep/redis against a real redis-server (started once for this file), through every
// client shape the adapter accepts: node-redis v5 and v4, ioredis, and @upstash/redis over HTTP.
import { after, before } from 'node:test';

import { createRedisChatMemory, createRedisSessionStorage } from '../../js/redis.mjs';
import { redisEval } from '../../js/stores/redis/client.mjs';
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

storeSuite({
  server: () => server,
  clients: REDIS_CLIENTS,
  sessionStorage: (client, prefix) => createRedisSessionStorage({ client, prefix }),
  chatMemory: (client, prefix, sessionId) => createRedisChatMemory({ client, prefix, sessionId }),
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
