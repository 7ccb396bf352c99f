// Types of `turnkeep/redis`: durable SessionStorage, ChatMemory and session logs on Redis.
import type { ChatMemory, Message, SafeId, SessionLogStore, SessionSnapshot, SessionStorage, StoreSessionLog } from './index.js';

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
  /**
   * Replaces the conversation in one script: readers see the old or the new one, whole. Refused
   * (rejects, writes nothing) under a lower `fence` than the last fenced save.
   */
  save(messages: Message[], options?: { signal?: AbortSignal; fence?: number }): Promise<void>;
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

/** The item store of one session's log on Redis (what `createStoreSessionLog` runs on). */
export interface RedisSessionLogStore extends SessionLogStore {
  head(options?: { signal?: AbortSignal }): Promise<string | null>;
  /** One Lua script: compare the head's version, append the items to the list, write the head. */
  commit(expectedVersion: number | null, items: string[], head: string, options?: { signal?: AbortSignal }): Promise<boolean>;
  items(from: number, limit: number, options?: { signal?: AbortSignal }): Promise<string[]>;
}

/**
 * The item store of one session's log: keys `<prefix>{<sessionId>}:log` (a list, one chunk per
 * element) and `<prefix>{<sessionId>}:log-head` (a hash: version, head), beside the session's.
 * @throws Error with `code: 'SERVER_INVALID_CONFIG'` for bad options or an unknown client shape
 */
export function createRedisSessionLogStore(options: RedisStoreOptions & { sessionId: SafeId }): RedisSessionLogStore;

/**
 * One session's durable log on Redis: `createStoreSessionLog({ store: createRedisSessionLogStore(options) })`,
 * producer fencing decided in Rust. For `createChatHandler({ sessionLog })`; cheap to create per request.
 * @throws Error with `code: 'SERVER_INVALID_CONFIG'` for bad options or an unknown client shape
 */
export function createRedisSessionLog(options: RedisStoreOptions & { sessionId: SafeId }): StoreSessionLog;
