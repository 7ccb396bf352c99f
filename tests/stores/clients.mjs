// The real client libraries the adapters are tested with, each opened against a server the
// test file started. `open(url)` returns `{ client, close() }`.
import { Redis as IoRedis } from 'ioredis';
import pg from 'pg';
import postgres from 'postgres';
import { createClient as createNodeRedis } from 'redis';
import { createClient as createNodeRedisV4 } from 'redis-v4';
import { Redis as UpstashRedis } from '@upstash/redis';

import { startUpstashRestProxy } from '../support/upstash-rest-proxy.mjs';

export const REDIS_CLIENTS = {
  'node-redis v5': async (url) => {
    const client = createNodeRedis({ url });
    await client.connect();
    return { client, close: () => client.close() };
  },
  ioredis: async (url) => {
    const client = new IoRedis(url, { lazyConnect: true });
    await client.connect();
    return { client, close: () => client.quit() };
  },
  'node-redis v4': async (url) => {
    const client = createNodeRedisV4({ url });
    await client.connect();
    return { client, close: () => client.quit() };
  },
  // Upstash's HTTP client over the REST stand-in (tests/support/upstash-rest-proxy.mjs).
  '@upstash/redis (HTTP)': async (url) => {
    const proxy = await startUpstashRestProxy(url);
    const client = new UpstashRedis({ url: proxy.url, token: proxy.token, retry: false, enableTelemetry: false });
    return { client, close: () => proxy.close() };
  },
};

export const POSTGRES_CLIENTS = {
  'pg (Pool)': async (url) => {
    const client = new pg.Pool({ connectionString: url, max: 8 });
    return { client, close: () => client.end() };
  },
  'postgres (porsager)': async (url) => {
    const client = postgres(url, { max: 8, onnotice: () => {} });
    return { client, close: () => client.end({ timeout: 5 }) };
  },
};
