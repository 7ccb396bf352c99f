// Types of `turnkeep/postgres`: durable SessionStorage, ChatMemory and session logs on PostgreSQL.
import type { ChatMemory, Message, SafeId, SessionLogStore, SessionSnapshot, SessionStorage, StoreSessionLog } from './index.js';

/**
 * The minimal client: a parameterised statement resolving to `{ rows }`. A `pg` Pool, Client
 * or pooled client has exactly this method.
 */
export interface PostgresQueryClient {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** A postgres.js (`postgres(url)`) sql function, used through `unsafe(text, params)`. */
export interface PostgresJsLike {
  unsafe(text: string, params?: any[], options?: any): PromiseLike<ArrayLike<unknown>>;
}

/** Any client the Postgres adapters accept. The host creates and closes it. */
export type PostgresClient = PostgresQueryClient | PostgresJsLike;

export interface PostgresStoreOptions {
  client: PostgresClient;
  /** Rows are keyed by (scope, session id): one scope per app or tenant. Default ''; at most 256 characters. */
  scope?: string;
}

/** The Postgres session storage: `delete` is always there. */
export interface PostgresSessionStorage extends SessionStorage {
  /** The stored envelope as JSON text, or undefined. */
  load(sessionId: SafeId, signal?: AbortSignal): Promise<string | undefined>;
  /** INSERT … ON CONFLICT DO NOTHING, or UPDATE … WHERE cursor = expected: `false` on conflict. */
  save(snapshot: SessionSnapshot | string, expectedCursor: number | undefined | null, signal?: AbortSignal): Promise<boolean>;
  /** `true` when a record existed. */
  delete(sessionId: SafeId, signal?: AbortSignal): Promise<boolean>;
}

/** The Postgres chat memory of one session. */
export interface PostgresChatMemory extends ChatMemory {
  load(options?: { signal?: AbortSignal }): Promise<Message[]>;
  /**
   * Replaces the conversation in one statement: readers see the old or the new one, whole. Refused
   * (rejects, writes nothing) under a lower `fence` than the last fenced save.
   */
  save(messages: Message[], options?: { signal?: AbortSignal; fence?: number }): Promise<void>;
}

/**
 * The migration (tables turnkeep_sessions, turnkeep_conversations, turnkeep_messages,
 * turnkeep_log_heads, turnkeep_log_items) as SQL text. Idempotent.
 */
export const POSTGRES_MIGRATION_SQL: string;

/** Runs POSTGRES_MIGRATION_SQL: safe at every start, concurrent runs wait for each other. */
export function migratePostgres(client: PostgresClient): Promise<void>;

/**
 * Session storage on Postgres (table turnkeep_sessions).
 * @throws Error with `code: 'SERVER_INVALID_CONFIG'` for bad options or an unknown client shape
 */
export function createPostgresSessionStorage(options: PostgresStoreOptions): PostgresSessionStorage;

/**
 * The messages of one session on Postgres (tables turnkeep_conversations, turnkeep_messages).
 * Make one per session in `resolveDefinition(context, sessionId)`.
 * @throws Error with `code: 'SERVER_INVALID_CONFIG'` for bad options or an unknown client shape
 */
export function createPostgresChatMemory(options: PostgresStoreOptions & { sessionId: SafeId }): PostgresChatMemory;

/** The item store of one session's log on Postgres (what `createStoreSessionLog` runs on). */
export interface PostgresSessionLogStore extends SessionLogStore {
  head(options?: { signal?: AbortSignal }): Promise<string | null>;
  /** One statement: move the head row `WHERE version = expected`, insert the items from what it returned. */
  commit(expectedVersion: number | null, items: string[], head: string, options?: { signal?: AbortSignal }): Promise<boolean>;
  items(from: number, limit: number, options?: { signal?: AbortSignal }): Promise<string[]>;
}

/**
 * The item store of one session's log (tables turnkeep_log_heads, turnkeep_log_items).
 * @throws Error with `code: 'SERVER_INVALID_CONFIG'` for bad options or an unknown client shape
 */
export function createPostgresSessionLogStore(options: PostgresStoreOptions & { sessionId: SafeId }): PostgresSessionLogStore;

/**
 * One session's durable log on Postgres: `createStoreSessionLog({ store: createPostgresSessionLogStore(options) })`,
 * producer fencing decided in Rust. For `createChatHandler({ sessionLog })`; cheap to create per request.
 * @throws Error with `code: 'SERVER_INVALID_CONFIG'` for bad options or an unknown client shape
 */
export function createPostgresSessionLog(options: PostgresStoreOptions & { sessionId: SafeId }): StoreSessionLog;
