// The example's database side: one client, made by the library the host chose, and the turnkeep
// stores over it. `openStore` is all that differs between Redis and Postgres.
import { createRedisChatMemory, createRedisSessionLog, createRedisSessionStorage } from 'turnkeep/redis';
import { createPostgresChatMemory, createPostgresSessionLog, createPostgresSessionStorage, migratePostgres } from 'turnkeep/postgres';

/** The client libraries this example can use, per database (the first is the default). */
export const CLIENTS = { redis: ['redis', 'ioredis'], postgres: ['pg', 'postgres'] };

/**
 * Connects to `url` with the `client` library and returns the three stores keyed per tenant:
 * `{ sessionStorage(tenant), memory(tenant, sessionId), log(tenant, sessionId), close() }`.
 */
export async function openStore({ store, url, client = CLIENTS[store]?.[0], onError = logError }) {
  if (!CLIENTS[store]?.includes(client)) throw new Error(`unknown store/client ${store}/${client}: choose from ${JSON.stringify(CLIENTS)}`);
  const connection = await connect(client, url, onError);
  if (store === 'redis') {
    // `/` never occurs in a SafeId tenant, so tenants' key spaces cannot overlap.
    const prefix = (tenant) => `turnkeep:${tenant}/`;
    const storages = new Map();
    return {
      sessionStorage: (tenant) => cached(storages, tenant, () => createRedisSessionStorage({ client: connection.client, prefix: prefix(tenant) })),
      memory: (tenant, sessionId) => createRedisChatMemory({ client: connection.client, prefix: prefix(tenant), sessionId }),
      log: (tenant, sessionId) => createRedisSessionLog({ client: connection.client, prefix: prefix(tenant), sessionId }),
      close: connection.close,
    };
  }
  await migratePostgres(connection.client);
  const storages = new Map();
  return {
    sessionStorage: (tenant) => cached(storages, tenant, () => createPostgresSessionStorage({ client: connection.client, scope: tenant })),
    memory: (tenant, sessionId) => createPostgresChatMemory({ client: connection.client, scope: tenant, sessionId }),
    log: (tenant, sessionId) => createPostgresSessionLog({ client: connection.client, scope: tenant, sessionId }),
    close: connection.close,
  };
}

async function connect(kind, url, onError) {
  switch (kind) {
    case 'redis': {
      const { createClient } = await import('redis');
      const client = createClient({ url });
      client.on('error', onError); // node-redis reconnects by itself; an unheard 'error' would crash the process
      await client.connect();
      return { client, close: () => client.close() };
    }
    case 'ioredis': {
      const { Redis } = await import('ioredis');
      const client = new Redis(url, { lazyConnect: true });
      client.on('error', onError);
      await client.connect();
      return { client, close: () => client.quit() };
    }
    case 'pg': {
      const { default: pg } = await import('pg');
      const client = new pg.Pool({ connectionString: url });
      client.on('error', onError); // an idle pooled connection that dies
      return { client, close: () => client.end() };
    }
    case 'postgres': {
      const { default: postgres } = await import('postgres');
      const client = postgres(url, { onnotice: () => {} });
      return { client, close: () => client.end({ timeout: 5 }) };
    }
  }
  throw new Error(`unknown client ${kind}`);
}

function cached(map, key, make) {
  if (!map.has(key)) map.set(key, make());
  return map.get(key);
}

function logError(error) {
  console.error('[durable-node] database client:', error.message);
}
