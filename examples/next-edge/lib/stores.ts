// Where the chat page's sessions live: Redis when REDIS_URL is set (durable: turns, messages and
// the session log survive a restart of the server), else memory (per process, NOT durable; the
// page says so). One store per process, kept on globalThis: Next loads each route file as its
// own module graph, and every route must see the same sessions.
import {
  createMemoryChatMemory,
  createMemorySessionLog,
  createMemorySessionStorage,
  type ChatMemory,
  type SessionLog,
  type SessionStorage,
} from 'turnkeep';
import { createRedisChatMemory, createRedisSessionLog, createRedisSessionStorage } from 'turnkeep/redis';
import { createClient } from 'redis';

/** What a transfer the `transfer` tool made looks like in the ledger. */
export interface Transfer {
  amount: number;
  idempotencyKey: string | null;
}

export interface Stores {
  /** `redis` (durable) or `memory` (not durable). */
  readonly kind: 'redis' | 'memory';
  sessionStorage(user: string): SessionStorage;
  memory(user: string, sessionId: string): ChatMemory;
  log(user: string, sessionId: string): SessionLog;
  /** The transfer tool's side effect: one entry per execution. */
  recordTransfer(user: string, transfer: Transfer): Promise<void>;
  transfers(user: string): Promise<Transfer[]>;
}

const holder = globalThis as typeof globalThis & { turnkeepExampleStores?: Promise<Stores> };

/** The process's stores (connected on first use). */
export function stores(): Promise<Stores> {
  holder.turnkeepExampleStores ??= open(process.env.REDIS_URL);
  return holder.turnkeepExampleStores;
}

async function open(url: string | undefined): Promise<Stores> {
  return url ? openRedis(url) : openMemory();
}

async function openRedis(url: string): Promise<Stores> {
  const client = createClient({ url });
  // node-redis reconnects by itself; an unheard 'error' event would end the process.
  client.on('error', (error: Error) => console.error('[next-example] redis:', error.message));
  await client.connect();
  // A user id is a SafeId (no `/`), so users' key spaces cannot overlap.
  const prefix = (user: string) => `next-example:${user}/`;
  const storages = new Map<string, SessionStorage>();
  return {
    kind: 'redis',
    sessionStorage: (user) => cached(storages, user, () => createRedisSessionStorage({ client, prefix: prefix(user) })),
    memory: (user, sessionId) => createRedisChatMemory({ client, prefix: prefix(user), sessionId }),
    log: (user, sessionId) => createRedisSessionLog({ client, prefix: prefix(user), sessionId }),
    recordTransfer: async (user, transfer) => {
      await client.rPush(`${prefix(user)}transfers`, JSON.stringify(transfer));
    },
    transfers: async (user) => (await client.lRange(`${prefix(user)}transfers`, 0, -1)).map((t) => JSON.parse(t) as Transfer),
  };
}

function openMemory(): Stores {
  const storages = new Map<string, SessionStorage>();
  const memories = new Map<string, ChatMemory>();
  const logs = new Map<string, SessionLog>();
  const ledger = new Map<string, Transfer[]>();
  const key = (user: string, sessionId: string) => `${user}/${sessionId}`;
  return {
    kind: 'memory',
    sessionStorage: (user) => cached(storages, user, createMemorySessionStorage),
    memory: (user, sessionId) => cached(memories, key(user, sessionId), createMemoryChatMemory),
    log: (user, sessionId) => cached(logs, key(user, sessionId), createMemorySessionLog),
    recordTransfer: async (user, transfer) => {
      cached(ledger, user, () => []).push(transfer);
    },
    transfers: async (user) => [...(ledger.get(user) ?? [])],
  };
}

function cached<V>(map: Map<string, V>, key: string, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
