// Types of `turnkeep/cloudflare` (workerd only): turnkeep's Durable Objects, the ports over
// them, and the chat routes of a user's own Worker (README.md, "On Cloudflare: turnkeep/cloudflare").
import type {
  AgentsKitChatDefinition,
  ChatDefinition,
  ChatDefinitionOptions,
  ChatHandlerOptions,
  ChatMemory,
  DurableStreamsLog,
  SafeId,
  SessionStorage,
} from './index.js';

/** What a Durable Object namespace binding offers that the ports use (`env.CHAT_SESSION`). */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: any): any;
}

/**
 * The `ChatSession` Durable Object: one per (tenant, session), SQLite-backed, holding the
 * session envelope (compare-and-set by cursor) and the canonical messages (rows of at most
 * 256 KiB). Re-export it under the class name wrangler.toml binds, in `new_sqlite_classes`.
 */
export declare class ChatSession {
  constructor(state: unknown, env: unknown);
  loadSession(sessionId: SafeId): Promise<string | undefined>;
  saveSession(snapshot: unknown, expectedCursor: number | null): Promise<boolean>;
  deleteSession(sessionId: SafeId): Promise<boolean>;
  loadMessages(): Promise<unknown[]>;
  /** Refused under a lower `fence` than the last fenced save (a turn's claim generation). */
  saveMessages(messages: unknown, fence?: number): Promise<void>;
  fetch(request: Request): Promise<Response>;
}

/**
 * The `SessionStream` Durable Object: one Durable Streams stream (a session's log) with
 * idempotent producers (fencing by epoch and seq). Bind it as `SESSION_STREAM` (forks reach
 * other streams through that name), in `new_sqlite_classes`.
 */
export declare class SessionStream {
  constructor(state: unknown, env: unknown);
  fetch(request: Request): Promise<Response>;
}

/** SessionStorage of one tenant over ChatSession objects (`<tenant>/<sessionId>`). */
export function createDurableObjectSessionStorage(options: {
  namespace: DurableObjectNamespaceLike;
  tenant: SafeId;
}): Required<SessionStorage>;

/** ChatMemory of one session, in its ChatSession object. */
export function createDurableObjectChatMemory(options: {
  namespace: DurableObjectNamespaceLike;
  tenant: SafeId;
  sessionId: SafeId;
}): ChatMemory;

/** The session log of one session: its SessionStream object (`chat/<tenant>/<sessionId>`). */
export function createDurableObjectSessionLog(options: {
  namespace: DurableObjectNamespaceLike;
  tenant: SafeId;
  sessionId: SafeId;
}): DurableStreamsLog;

export interface CloudflareChatOptions<Context = unknown>
  extends Omit<ChatHandlerOptions<Context>, 'resolveDefinition' | 'sessionStorage' | 'sessionLog'> {
  /**
   * The chat: defineChat's options without `memory` (the session's ChatSession object is
   * added), or a function given the session's memory.
   */
  definition:
    | Omit<ChatDefinitionOptions, 'memory'>
    | ((context: Context, sessionId: SafeId, memory: ChatMemory, signal: AbortSignal) =>
        ChatDefinition | ChatDefinitionOptions | AgentsKitChatDefinition | Promise<ChatDefinition | ChatDefinitionOptions | AgentsKitChatDefinition>);
  /**
   * Whose objects a request reaches. Default: the context when it is a SafeId, `'default'`
   * without `authenticate`; any other context is refused (a fault), so pass this.
   */
  tenant?(context: Context): SafeId;
  /** The turn route (AgentsKit's wire), default `/api/chat`; the live stream and snapshot are under it. */
  api?: string;
  /** The AI SDK / TanStack AI routes, default `/api/ui/chat`. */
  uiApi?: string;
  /** The `env` names of the two namespaces, default `CHAT_SESSION` and `SESSION_STREAM`. */
  bindings?: { chatSession?: string; sessionStream?: string };
}

export interface CloudflareChat {
  /** The chat's routes answered; null for any other request. */
  handle(request: Request, env: unknown, ctx?: { waitUntil(promise: Promise<unknown>): void }): Promise<Response | null>;
  /** The same, 404 for any other request: a whole Worker's `fetch`. */
  fetch(request: Request, env: unknown, ctx?: { waitUntil(promise: Promise<unknown>): void }): Promise<Response>;
}

/**
 * The chat routes of a Worker over turnkeep's Durable Objects: `POST {api}` (a send, a stop,
 * an approval's decision), `GET {api}/stream/:sessionId` (the live log), `GET
 * {api}/sessions/:sessionId` (the snapshot), and the UI message stream routes under `{uiApi}`.
 * Throws an Error with `code: 'SERVER_INVALID_CONFIG'` for bad options.
 */
export function createCloudflareChat<Context = unknown>(options: CloudflareChatOptions<Context>): CloudflareChat;
