// Types of `turnkeep/client`: the browser client (the live connection, the one projection and
// its markup, the turn protocol). The shared types are `turnkeep`'s (index.d.ts).
import type { ChatSnapshot, LogConfirmation, Message, SafeId, TanStackChunk, TanStackHydration, TurnDiagnostic, TurnSnapshotEvent, UIMessage } from './index.js';

export {
  version,
  decodeTurnEvent,
  encodeTurnEvent,
  createTurnSnapshotCursor,
  createSnapshotEvent,
  snapshotMessages,
  decodeComponentFrame,
  isComponentFrameCandidate,
  createSelectionEvent,
  createInteractionEvent,
  createAssistantContentEncoder,
  decodeAssistantContent,
  isAssistantContentCandidate,
  AssistantContentPartSchema,
  TURN_PROTOCOL,
  TURN_PROTOCOL_VERSION,
  SESSION_PROTOCOL,
  SESSION_PROTOCOL_VERSION,
  COMPONENT_PROTOCOL,
  COMPONENT_PROTOCOL_VERSION,
  ASSISTANT_CONTENT_PROTOCOL,
  ASSISTANT_CONTENT_PROTOCOL_VERSION,
  ASSISTANT_CONTENT_PREFIX,
  ASSISTANT_CONTENT_MAX_BYTES,
  ASSISTANT_CONTENT_MAX_RECORDS,
  projectChatSnapshot,
  ChatProjection,
  renderChatHtml,
  renderChatMessages,
  toUIMessages,
  toTanStackHydration,
} from './index.js';
export type * from './index.js';

// ---- The live connection ----

/** A versioned diagnostic, with the HTTP status when a server refused. */
export interface ConnectionDiagnostic extends TurnDiagnostic {
  status?: number;
}

/** What a reader, `send` or `stopTurn` rejects with. */
export class ChatConnectionError extends Error {
  readonly name: 'ChatConnectionError';
  readonly code: string;
  readonly retryable: boolean;
  readonly status?: number;
  readonly diagnostic: ConnectionDiagnostic;
}

/**
 * The seed's target: the session only. Its routes are turnkeep's canonical ones under `baseUrl`
 * (the page's origin when absent): the stream at `api/chat/stream/<sessionId>`, the chat
 * endpoint at `api/chat` (or `chatUrl`). Needs `authorize`.
 */
export interface ChatSessionTarget {
  sessionId: SafeId;
  baseUrl?: string;
  chatUrl?: string;
  headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
}

export interface ChatConnectionTarget {
  /** The session stream: a Durable Streams SSE endpoint (e.g. a chat-stream proxy route). Relative in a page. */
  url: string;
  /** The chat endpoint `send` and `stopTurn` post to (with `sessionId`). */
  chatUrl?: string;
  sessionId?: string;
  /** Sent with every request (e.g. the app's own Authorization). */
  headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
}

export interface ChatConnectionOptions {
  target: string | ChatConnectionTarget | ChatSessionTarget;
  /** A whole seed (`resolveChatSnapshot`'s answer), in place of the `initial*` options; checked against the session and `definitionRevision`. */
  seed?: ChatSnapshot & { offset?: string | null };
  /** The definition revision the page was prepared for: a seed or chunk naming another is refused (`RENDER_REVISION_MISMATCH`). */
  definitionRevision?: number;
  /**
   * Asked before every request the connection makes, with the request and the session id; a
   * falsy answer sends nothing (a read ends `STREAM_REFUSED` 403, a post rejects
   * `SESSION_FORBIDDEN`). Required with a `{ sessionId }` target (`false`: the server
   * authorizes every request).
   */
  authorize?: ((request: Request, sessionId: SafeId | undefined) => boolean | Promise<boolean>) | false;
  /** The headers of every request (default `defaultStreamsAuth(target)`: the target's headers). */
  auth?: () => HeadersInit | Promise<HeadersInit>;
  /** The messages the client holds already (a seed's `messages`): the replay state's start. */
  initialMessages?: unknown[];
  /** Read after this offset (a seed's `offset`): the suffix only. Absent: the whole log, then live. */
  initialOffset?: string;
  /** The run still going when the seed was taken (a seed's `activeRunId`). */
  initialRunId?: string;
  fetch?: (request: Request) => Promise<Response>;
  /**
   * Read live over a WebSocket carrying the SSE read's events (on Cloudflare the stream's object
   * hibernates with it open: an idle page costs nothing): `true` (the global `WebSocket`, which
   * sends cookies but no custom headers) or `(url, headers) => WebSocket`. A socket that fails to
   * open makes the connection read SSE from then on.
   */
  webSocket?: boolean | ((url: string, headers: Headers) => WebSocket);
}

export interface ChatConnection {
  /**
   * A logical reader: the chunks delivered from now on, each once and in order, until `signal`
   * fires, the loop stops, `dispose()` is called or the stream is closed. All readers share one
   * SSE read. Ends with a `ChatConnectionError` when the stream refuses or stays unreachable.
   */
  subscribe(signal?: AbortSignal): AsyncIterable<unknown>;
  /**
   * Submits a turn (`client.turn.submit`): `messages` is the input text, or messages whose last
   * user message is it (AI SDK, TanStack or AgentsKit shapes). That message is posted whole as
   * `payload.message`, so the stored message keeps its id, attachments and metadata; a message
   * that breaks a rule rejects before anything is posted, naming the field. Resolves when the
   * turn's answer ends, with its last snapshot.
   */
  send(
    messages: string | unknown[],
    options?: { signal?: AbortSignal; turnId?: string; onSnapshot?: (event: TurnSnapshotEvent) => void },
  ): Promise<{ turnId: string; snapshot?: TurnSnapshotEvent }>;
  /** Asks the server to stop the running turn `turnId` (`client.turn.stop`), from any client. */
  stopTurn(turnId: string, options?: { signal?: AbortSignal }): Promise<{ version: 1; turnId: string; state: 'stopping' | 'ended'; outcome?: string }>;
  /**
   * Asks the connection's `authorize` about a request an adapter over it is about to send
   * (`toTanStackConnection` and `TurnkeepChatTransport` ask it for each of theirs); rejects with
   * `SESSION_FORBIDDEN` when refused. Resolves at once without an `authorize`.
   */
  authorizeRequest(request: Request): Promise<void>;
  /** The replay state (initial messages and every chunk delivered, projected) and the cursor. */
  snapshot(): ChatSnapshot & { offset: string | null };
  /** The transport cursor: where the next read starts (null at the start). */
  readonly offset: string | null;
  /** A turn was accepted through another route: a reader waiting for the stream reads at once. */
  nudge(): void;
  /** The versioned diagnostic of a refused request to a turnkeep route, as the error to throw. */
  failure(status: number, body: string): ChatConnectionError;
  /** One idempotent teardown: ends every reader, the read and any send in flight. */
  close(): void;
  stop(): void;
  dispose(): void;
}

export function createChatConnection(options: ChatConnectionOptions): ChatConnection;

/** The auth provider a connection uses when given none: the target's own `headers`. */
export function defaultStreamsAuth(target: ChatConnectionOptions['target']): () => Promise<Headers>;

// ---- The AI SDK's ChatTransport over the connection ----

/** An AI SDK UI message chunk (`ai` 7's `UIMessageChunk`), as the server's mapping writes it. */
export type UIMessageChunk = Record<string, unknown> & { type: string };

/**
 * The AI SDK's `ChatTransport<UIMessage>` (`useChat({ transport })`) over a turnkeep server's UI
 * message stream routes (`createUIMessageChatHandler` at `api`) and the page's one connection.
 * `sendMessages` posts what the stock `DefaultChatTransport` posts and returns the turn's own
 * stream; `reconnectToStream` follows the running turn from the offset the connection holds
 * (null, with no request, when none runs); `stop` stops the running turn from any tab;
 * `onRemoteTurn` says when another tab started one (call `setMessages(transport.messages())`,
 * then `resumeStream()`).
 */
export class TurnkeepChatTransport {
  constructor(options: {
    connection: ChatConnection;
    /** The UI message stream route. Default `/api/chat`. */
    api?: string;
    headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
    body?: object | (() => object | Promise<object>);
    credentials?: RequestCredentials;
    fetch?: typeof globalThis.fetch;
  });
  readonly resumeStreamIsReplay: true;
  sendMessages(options: {
    trigger: 'submit-message' | 'regenerate-message';
    chatId: string;
    messageId: string | undefined;
    messages: UIMessage[];
    abortSignal: AbortSignal | undefined;
    headers?: HeadersInit;
    body?: object;
    metadata?: unknown;
  }): Promise<ReadableStream<UIMessageChunk>>;
  reconnectToStream(options: { chatId: string; abortSignal?: AbortSignal; headers?: HeadersInit; body?: object; metadata?: unknown }): Promise<ReadableStream<UIMessageChunk> | null>;
  stop(options: { chatId: string; signal?: AbortSignal }): Promise<{ version: 1; turnId: string; state: 'stopping' | 'ended' | 'idle'; outcome?: string }>;
  /** The conversation the connection holds, as `UIMessage[]`. */
  messages(): UIMessage[];
  /** Calls `callback` when a turn starts that this transport did not send; returns the unsubscribe. */
  onRemoteTurn(callback: (turn: { runId: string }) => void): () => void;
  close(): void;
}

/** The one mapping from session log chunks to UI message chunks, for one turn. */
export class UIMessageChunkMapper {
  constructor();
  /** Starts from a conversation held mid-turn: the chunks that rebuild its last answer. */
  rebuild(messages: Message[], confirmations?: LogConfirmation[], runId?: string): UIMessageChunk[];
  feed(chunk: unknown): UIMessageChunk[];
  readonly ended: boolean;
  free(): void;
}

/** A UI message stream's bytes back into chunks. */
export class UIMessageStreamReader {
  constructor();
  push(bytes: Uint8Array): { chunks: UIMessageChunk[]; done: boolean };
  free(): void;
}

// ---- TanStack AI's connection adapter over the connection ----

/** TanStack AI's `SubscribeConnectionAdapter` (`useChat({ connection })`), plus `stop()`. */
export interface TanStackConnection {
  /**
   * The connection's chunks from its offset. A `hydrate` or `joinRun` moves it past what they
   * restore, and a joined run's chunks are left to the join (so `useChat({ live: true,
   * persistence: true })` shows each once).
   */
  subscribe(abortSignal?: AbortSignal): AsyncIterable<TanStackChunk>;
  send(
    messages: unknown[],
    data?: Record<string, unknown>,
    abortSignal?: AbortSignal,
    runContext?: {
      threadId: string;
      runId: string;
      parentRunId?: string;
      resume?: Array<{ interruptId: string; status: 'resolved' | 'cancelled'; payload?: unknown }>;
      clientTools?: Array<{ name: string; description: string; parameters: unknown }>;
      forwardedProps?: Record<string, unknown>;
      headers?: Record<string, string>;
    },
  ): Promise<void>;
  joinRun(runId: string, abortSignal?: AbortSignal): AsyncIterable<TanStackChunk>;
  hydrate(threadId: string, options?: { limit?: number; before?: string }): Promise<TanStackHydration>;
  /** Stops whatever turn runs in the thread, from any tab (TanStack's own `stop()` only stops listening). */
  stop(options?: { signal?: AbortSignal }): Promise<{ version: 1; turnId: string; state: 'stopping' | 'ended' | 'idle'; outcome?: string }>;
}

/**
 * `toTanStackConnection(connection, { api, threadId? })`: the adapter over the page's one
 * connection and the chat route (`createUIMessageChatHandler` at `api`, which takes AG-UI
 * `RunAgentInput` bodies). Seed the connection (`initialMessages`, `initialOffset`,
 * `initialRunId`) from the server's snapshot so its live read starts after it.
 */
export function toTanStackConnection(
  connection: ChatConnection,
  options: {
    api: string;
    /** The session id; else the one TanStack passes to `send` / `hydrate`. */
    threadId?: string;
    headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
    credentials?: RequestCredentials;
    fetch?: typeof globalThis.fetch;
  },
): TanStackConnection;

/** `joinRun`'s rule: the answer so far rebuilt (`start()`), then the log's chunks until the run ends. */
export class TanStackRunJoin {
  constructor(snapshot: Pick<ChatSnapshot, 'messages'> & Partial<ChatSnapshot>, threadId: string, runId: string, nowMs: number);
  start(): TanStackChunk[];
  feed(chunk: unknown): TanStackChunk | undefined;
  readonly ended: boolean;
  free(): void;
}
