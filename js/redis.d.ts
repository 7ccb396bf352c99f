// Types of `turnkeep/redis`: durable SessionStorage and ChatMemory on Redis.
import type { ChatMemory, Message, SafeId, SessionSnapshot, SessionStorage } from './index.js';

/**
 * The minimal client: run a Lua script over `keys` with string `args`. `@upstash/redis` (HTTP,
 * usable on edge runtimes) has exactly this method.
 */
export interface RedisEvalClient {
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
}

/** A node-redis v4 / v5 client or cluster (`createClient()`, `createCluster()`), told apart by `sendCommand`. */
export interface NodeRedisClientLike {
  sendCommand(...args: any[]): unknown;
  eval(script: string, options: { keys?: string[]; arguments?: string[] }): Promise<unknown>;
}

/** An ioredis `Redis` or `Cluster`, told apart by `defineCommand` and `call`. */
export interface IoRedisClientLike {
  defineCommand(...args: any[]): unknown;
  call(...args: any[]): unknown;
  eval(script: string, numKeys: number | string, ...keysAndArgs: (string | Buffer | number)[]): Promise<unknown>;
}

/** Any client the Redis adapters accept. The host creates, connects and closes it. */
export type RedisClient = NodeRedisClientLike | IoRedisClientLike | RedisEvalClient;

export interface RedisStoreOptions {
  client: RedisClient;
  /**
   * Put before every key (default `turnkeep:`); keeps apps or tenants apart, e.g.
   * `app:${tenant}/`. At most 256 characters, without `{` or `}` (the session id is the
   * Redis Cluster hash tag).
   */
  prefix?: string;
}

/** The Redis session storage: `delete` is always there. */
export interface RedisSessionStorage extends SessionStorage {
  /** The stored envelope as JSON text (an object from a client that decodes JSON itself), or undefined. */
  load(sessionId: SafeId, signal?: AbortSignal): Promise<unknown>;
  /** One Lua script compares the stored cursor and writes: `false` on conflict, never last-write-wins. */
  save(snapshot: SessionSnapshot | string, expectedCursor: number | undefined | null, signal?: AbortSignal): Promise<boolean>;
  /** `true` when a record existed. */
  delete(sessionId: SafeId, signal?: AbortSignal): Promise<boolean>;
}

/** The Redis chat memory of one session. */
export interface RedisChatMemory extends ChatMemory {
  load(options?: { signal?: AbortSignal }): Promise<Message[]>;
  /** Replaces the conversation in one script: readers see the old or the new one, whole. */
  save(messages: Message[], options?: { signal?: AbortSignal }): Promise<void>;
}

export const REDIS_PREFIX_DEFAULT: 'turnkeep:';

/**
 * Session storage on Redis: key `<prefix>{<sessionId>}:session`, a hash of cursor and envelope.
 * @throws Error with `code: 'SERVER_INVALID_CONFIG'` for bad options or an unknown client shape
 */
export function createRedisSessionStorage(options: RedisStoreOptions): RedisSessionStorage;

/**
 * The messages of one session on Redis: key `<prefix>{<sessionId>}:messages`, a list with one
 * message per element. Make one per session in `resolveDefinition(context, sessionId)`.
 * @throws Error with `code: 'SERVER_INVALID_CONFIG'` for bad options or an unknown client shape
 */
export function createRedisChatMemory(options: RedisStoreOptions & { sessionId: SafeId }): RedisChatMemory;
