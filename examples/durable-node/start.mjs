// `npm run example:redis` / `npm run example:postgres`: starts a local database (Debian's
// redis-server or PostgreSQL, data kept in .state/<store>/ across restarts), then the durable
// chat server on it (serve.mjs) at http://127.0.0.1:8080/ (PORT overrides). Ctrl-C stops both.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { startPostgres, startRedis } from '../../tests/support/databases.mjs';
import { serve } from './serve.mjs';

const store = process.argv[2];
if (store !== 'redis' && store !== 'postgres') {
  console.error('usage: node examples/durable-node/start.mjs redis|postgres');
  process.exit(2);
}
const dataDir = fileURLToPath(new URL(`../../.state/${store}`, import.meta.url));
mkdirSync(dataDir, { recursive: true });
const database = await (store === 'redis' ? startRedis({ dataDir }) : startPostgres({ dataDir }));
const env = { ...process.env, TURNKEEP_STORE: store, [store === 'redis' ? 'REDIS_URL' : 'DATABASE_URL']: database.url };
const server = await serve(env);
console.log(`[example] ${store} at ${database.url} (data in .state/${store}/)`);
console.log(`[example] durable chat: ${server.url}  (Ctrl-C to stop)`);
console.log(`[example] try: curl -s ${server.url}api/sessions/s1 -H 'authorization: Bearer demo'`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, async () => {
    await server.stop();
    await database.stop();
    process.exit(0);
  });
}
