// Types of the `turnkeep` entry: the chat server (every runtime's entry point exports the same
// surface). `turnkeep/client`, `turnkeep/ask` and `turnkeep/sandbox` have their own (client.d.ts,
// ask.d.ts, sandbox.d.ts), sharing these types.

/** A SafeId: `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`. */
export type SafeId = string;

/** ISO-8601 timestamp; servers write `Date.prototype.toISOString()` output. */
export type Timestamp = string;

/** Fields every turn event carries (`agentskit.chat.turn` version 1). */
export interface TurnEnvelope {
  protocol: 'agentskit.chat.turn';
  version: 1;
  eventId: SafeId;
  sessionId: SafeId;
  turnId: SafeId;
  /** A safe integer >= 0; strictly increasing across the snapshots of a session. */
  sequence: number;
  emittedAt: Timestamp;
}

/** A failure delivered to a client: versioned, with a stable code. */
export interface TurnDiagnostic {
  version: 1;
  /** `^[A-Z][A-Z0-9_]*$`, e.g. `SESSION_BUSY`. */
  code: string;
  message: string;
  retryable: boolean;
}

export type MessageRole = 'user' | 'assistant' | 'system' | 'tool';
export type MessageStatus = 'pending' | 'streaming' | 'complete' | 'error';
export type ToolCallStatus = 'pending' | 'running' | 'complete' | 'error' | 'requires_confirmation';

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; source: string; mimeType?: string; detail?: 'low' | 'high' | 'auto' }
  | { type: 'audio' | 'video'; source: string; mimeType?: string; durationSec?: number }
  | { type: 'file'; source: string; mimeType?: string; filename?: string };

export interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  status: ToolCallStatus;
  result?: string;
  error?: string;
}

/** A chat message in canonical wire form. */
export interface Message {
  id: string;
  role: MessageRole;
  content: string;
  status: MessageStatus;
  /** UTC with exactly 3 fraction digits, e.g. `2026-07-11T03:00:00.000Z`. */
  createdAt: Timestamp;
  parts?: ContentPart[];
  toolCalls?: ToolCall[];
  toolCallId?: string;
  metadata?: Record<string, unknown>;
}

export type TurnStatus = 'idle' | 'streaming' | 'complete' | 'error';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export type Lineage =
  | { operation: 'submit' }
  | { operation: 'retry' | 'edit' | 'regenerate'; parentTurnId: SafeId; sourceMessageId: SafeId };

export interface SnapshotPayload {
  /** The whole conversation (a full projection, not a delta). */
  messages: Message[];
  status: TurnStatus;
  usage: Usage;
  error?: TurnDiagnostic;
  lineage?: Lineage;
  /**
   * turnkeep (additive): the session's tool confirmations that are not final, and any this turn
   * resolved or created. Absent when there are none.
   */
  confirmations?: Confirmation[];
}

/** A tool call waiting for (or past) a person's decision, as the session envelope holds it. */
export interface Confirmation {
  /** `confirm-<toolCallId>`: what `client.confirmation.resolve` takes. */
  token: SafeId;
  /** The tool's name (`tool:<name>` for a name that starts with `_` or `-`). */
  action: SafeId;
  input: Record<string, unknown>;
  toolCallId: SafeId;
  /** Epoch milliseconds. */
  expiresAt: number;
  status: ConfirmationStatus;
}

/**
 * turnkeep (additive, v1): a person's decision about a confirmation, posted to the chat
 * endpoint. `turnId` is the turn that proposed it. The request that wins the decision gets the
 * continuation as an NDJSON stream of snapshots (its `turnId` is the token); any other gets
 * `{ confirmation: { version: 1, ...Confirmation } }` (200 final, 202 still being processed).
 */
export interface ConfirmationResolveEvent extends TurnEnvelope {
  event: 'client.confirmation.resolve';
  payload: { token: SafeId; decision: 'approve' | 'reject'; /** at most 1024 characters */ reason?: string };
}

export interface TurnSubmitEvent extends TurnEnvelope {
  event: 'client.turn.submit';
  payload: { input: string };
}

export interface TurnSnapshotEvent extends TurnEnvelope {
  event: 'server.turn.snapshot';
  payload: SnapshotPayload;
}

export interface TurnDiagnosticEvent extends TurnEnvelope {
  event: 'server.turn.diagnostic';
  payload: TurnDiagnostic;
}

export type TurnEvent = TurnSubmitEvent | TurnSnapshotEvent | TurnDiagnosticEvent;

/**
 * Why an input is not a turn event (AgentsKit Chat's `ProtocolDecodeDiagnostic`). Returned to
 * the caller, never sent on the wire.
 */
export interface ProtocolDecodeDiagnostic {
  code: 'PROTOCOL_INVALID_PAYLOAD' | 'PROTOCOL_UNSUPPORTED_VERSION' | 'PROTOCOL_UNKNOWN_EVENT';
  /**
   * The reference text: `Turn event is not valid JSON.`, `Turn event uses an unsupported protocol
   * version.`, `Turn event kind is unknown.` or `Turn event payload is invalid.` It quotes nothing
   * of the input; `encodeTurnEvent` throws an Error that names the failing field.
   */
  message: string;
  retryable: false;
  /** The input's `eventId`, when it was a valid SafeId. */
  eventId?: SafeId;
}

export type DecodeTurnEventResult =
  | { ok: true; event: TurnEvent }
  | { ok: false; diagnostic: ProtocolDecodeDiagnostic };

/**
 * Decodes JSON text or a value. The event comes back in canonical form (unknown fields dropped).
 * A value JSON cannot hold (a function, `NaN`, a `Date`, a getter, a cycle) anywhere in an object
 * input makes it invalid: it is refused, not dropped. Never throws.
 */
export function decodeTurnEvent(input: unknown): DecodeTurnEventResult;

/** Canonical compact JSON of a turn event. Throws an `Error` naming the field when invalid. */
export function encodeTurnEvent(event: TurnEvent | string): string;

type DeepReadonly<T> = T extends (infer U)[] ? readonly DeepReadonly<U>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/**
 * Follows one session's snapshots (AgentsKit's `TurnSnapshotCursor`): `apply` accepts the first
 * valid snapshot, then only strictly greater sequences, and says whether it did. Other sessions,
 * diagnostics, duplicates, stale and undecodable input are ignored (`false`).
 */
export interface TurnSnapshotCursor {
  apply(event: unknown): boolean;
  /** The last accepted snapshot, deep-frozen; the same object until the next accepted one. */
  getSnapshot(): DeepReadonly<TurnSnapshotEvent> | undefined;
}

/** Throws when `sessionId` is not a SafeId. */
export function createTurnSnapshotCursor(sessionId: SafeId): TurnSnapshotCursor;

/** AgentsKit's `Message`: the wire message with `createdAt` as a `Date`. */
export type ChatMessage = Omit<Message, 'createdAt'> & { createdAt: Date };

export interface CreateSnapshotEventOptions {
  eventId: SafeId;
  sessionId: SafeId;
  turnId: SafeId;
  sequence: number;
  emittedAt: Timestamp;
  /** AgentsKit Messages (`createdAt` a Date) or wire messages. */
  messages: readonly (ChatMessage | Message)[];
  status: TurnStatus;
  usage: Usage;
  lineage?: Lineage;
  error?: TurnDiagnostic;
}

/** A `server.turn.snapshot` event in canonical form. Throws an `Error` naming the field when invalid. */
export function createSnapshotEvent(options: CreateSnapshotEventOptions): TurnSnapshotEvent;

/** The messages of a valid snapshot event, as AgentsKit Messages. Throws for anything else. */
export function snapshotMessages(event: unknown): ChatMessage[];

// ---- Component frames and the assistant content envelope (AgentsKit Chat's protocol package) ----

export const TURN_PROTOCOL: 'agentskit.chat.turn';
export const TURN_PROTOCOL_VERSION: 1;
export const SESSION_PROTOCOL: 'agentskit.chat.session';
export const SESSION_PROTOCOL_VERSION: 1;
export const COMPONENT_PROTOCOL: 'agentskit.chat.component';
export const COMPONENT_PROTOCOL_VERSION: 1;
export const ASSISTANT_CONTENT_PROTOCOL: 'agentskit.chat.content';
export const ASSISTANT_CONTENT_PROTOCOL_VERSION: 1;
/** `\u001e` + `agentskit.chat.content/1` + `\n`: the header of a version 1 envelope. */
export const ASSISTANT_CONTENT_PREFIX: string;
/** UTF-8 bytes of a whole envelope. */
export const ASSISTANT_CONTENT_MAX_BYTES: 262144;
export const ASSISTANT_CONTENT_MAX_RECORDS: 512;

export interface ComponentRenderFrame {
  protocol: 'agentskit.chat.component';
  version: 1;
  type: 'render';
  /** `^[a-z][a-z0-9-]{0,63}$` */
  componentKey: string;
  instanceId: SafeId;
  /** Bounded JSON: at most 1000 values, depth 20, strings of 16384 UTF-16 units. */
  props: unknown;
  fallback: { kind: string; summary: string };
}

export interface ComponentSelectionEvent {
  protocol: 'agentskit.chat.component';
  version: 1;
  type: 'select';
  componentKey: string;
  instanceId: SafeId;
  choiceId: SafeId;
}

export interface ComponentInteractionEvent {
  protocol: 'agentskit.chat.component';
  version: 1;
  type: 'interact';
  componentKey: string;
  instanceId: SafeId;
  /** `^[a-z][a-z0-9-]{0,63}$` */
  event: string;
  value?: unknown;
}

export type DecodeComponentFrameResult =
  | { ok: true; frame: ComponentRenderFrame }
  | {
      ok: false;
      diagnostic: { code: 'COMPONENT_UNSUPPORTED_VERSION' | 'COMPONENT_UNKNOWN_TYPE' | 'COMPONENT_INVALID_FRAME'; message: string; retryable: false };
    };

/** A render frame from JSON text or a value, in canonical form. Never throws. */
export function decodeComponentFrame(input: unknown): DecodeComponentFrameResult;
/** Whether `input` (text or an object) names the component protocol, valid or not. */
export function isComponentFrameCandidate(input: unknown): boolean;
/** Throws an `Error` naming the failing field. */
export function createSelectionEvent(frame: ComponentRenderFrame, choiceId: SafeId): ComponentSelectionEvent;
/** Throws an `Error` naming the failing field; `value` must be bounded JSON. */
export function createInteractionEvent(frame: ComponentRenderFrame, event: string, value?: unknown): ComponentInteractionEvent;

export type AssistantContentPart =
  | { kind: 'text'; text: string }
  | { kind: 'component'; frame: ComponentRenderFrame };

export interface AssistantContentEncoder {
  /** The text to append for `part` (the first part carries the header). Throws naming the failing field. */
  encode(part: AssistantContentPart): string;
}

export function createAssistantContentEncoder(): AssistantContentEncoder;

export type DecodeAssistantContentResult =
  | { ok: true; parts: readonly AssistantContentPart[]; complete: boolean }
  | {
      ok: false;
      diagnostic: {
        code: 'ASSISTANT_CONTENT_UNSUPPORTED_VERSION' | 'ASSISTANT_CONTENT_INVALID_RECORD' | 'ASSISTANT_CONTENT_LIMIT_EXCEEDED';
        message: string;
        retryable: false;
      };
    };

/** Reads an envelope, also one still being streamed (`complete: false`). Never throws. */
export function decodeAssistantContent(input: unknown): DecodeAssistantContentResult;

/** AgentsKit's `AssistantContentPartSchema` (a zod schema there): the part rules of the envelope. */
export interface AssistantContentPartSchemaLike {
  /** The part, canonical (unknown keys dropped) and frozen, or why it is not one. */
  safeParse(value: unknown):
    | { success: true; data: Readonly<AssistantContentPart> }
    | { success: false; error: Error & { issues: { path: string[]; message: string }[] } };
  /** The part, or throws the `safeParse` error. */
  parse(value: unknown): Readonly<AssistantContentPart>;
}
export const AssistantContentPartSchema: AssistantContentPartSchemaLike;
/** A string that starts like an envelope (`\u001e`). */
export function isAssistantContentCandidate(input: unknown): input is string;

export type ConfirmationStatus =
  | 'pending' | 'approving' | 'rejecting' | 'expiring' | 'approved' | 'rejected' | 'expired';

/** The stored session envelope (`agentskit.chat.session` version 1). Messages live elsewhere. */
export interface SessionSnapshot {
  protocol: 'agentskit.chat.session';
  version: 1;
  sessionId: SafeId;
  definitionId: SafeId;
  definitionRevision: number;
  updatedAt: Timestamp;
  cursor: number;
  activeTurn?: { turnId: SafeId; expiresAt: number };
  terminalTurns?: { turnId: SafeId; outcome: 'completed' | 'indeterminate' }[];
  conversation?: {
    state: string;
    decisions: {
      messageId: SafeId;
      input: string;
      routeId: SafeId;
      kind: 'deterministic' | 'repaired' | 'fallback';
      content: string;
      fromState: string;
      toState: string;
    }[];
  };
  confirmations: Confirmation[];
  /**
   * turnkeep's additive field: sends waiting for the session under `sendPolicy: 'queue'` or
   * `'latest'`, oldest first (at most 8). Omitted when empty; AgentsKit's decoder drops it.
   */
  queuedTurns?: { turnId: SafeId; expiresAt: number }[];
}

/** Why a stored value is not a session envelope. Never sent on the wire (clients see `SERVER_INTERNAL`). */
export interface SessionDecodeDiagnostic {
  code: 'SESSION_INVALID_SNAPSHOT' | 'SESSION_UNSUPPORTED_VERSION';
  /** `Session snapshot is not valid JSON.`, `... uses an unsupported version.` or `... payload is invalid.` */
  message: string;
  retryable: false;
}

export type DecodeSessionSnapshotResult =
  | { ok: true; snapshot: SessionSnapshot }
  | { ok: false; diagnostic: SessionDecodeDiagnostic };

/** Decodes a stored value (object or JSON text); a v0 envelope comes back migrated to v1. */
export function decodeSessionSnapshot(input: unknown): DecodeSessionSnapshotResult;

export interface ResumeChatSessionOptions {
  sessionId: SafeId;
  storage: SessionStorage;
  /** The clock (default `new Date()`). */
  now?(): Date;
  /** Handed to every storage call that is not given its own. */
  signal?: AbortSignal;
}

/**
 * A conversation statechart (AgentsKit's `ConversationDefinition`). turnkeep validates a stored
 * conversation against it (its decisions must replay to its state) and carries it through every
 * save; it does not route turns by it. `match` and `response` of a route are not read.
 */
export interface ConversationDefinition {
  initial: string;
  states: Record<string, { on?: Record<string, string>; actions?: readonly string[] }>;
  routes: readonly { id: SafeId; event: string; states?: readonly string[]; [other: string]: unknown }[];
}

/**
 * A resumed session (AgentsKit's `ChatSession`, without in-process confirmations: turnkeep
 * resolves them over HTTP): turn claims, releases and saves are compare-and-set writes through the
 * storage, run one at a time in call order. A lost write rejects with a `SessionConflictError`
 * and commits nothing.
 */
export interface ChatSession {
  readonly sessionId: SafeId;
  readonly definitionId: SafeId;
  readonly definitionRevision: number;
  /** The definition's `chat`, as given. */
  readonly chat: unknown;
  updateChat<T>(chat: T): T;
  /** The stored conversation, or `undefined` for a definition without a statechart. */
  getConversationSnapshot(): SessionSnapshot['conversation'];
  /** Not supported (throws): turnkeep resolves confirmations over HTTP (`client.confirmation.resolve`). */
  createConfirmation(): never;
  /** Saves the session with cursor + 1. */
  persist(signal?: AbortSignal): Promise<void>;
  getCursor(): number;
  /** `true` when this turn now holds the lease; `false` when another does or `turnId` already finished. */
  claimTurn(turnId: SafeId, leaseMs: number, signal?: AbortSignal): Promise<boolean>;
  /** Ends the turn holding the lease; does nothing for another turn id. */
  releaseTurn(turnId: SafeId, outcome: 'completed' | 'indeterminate', signal?: AbortSignal): Promise<void>;
  /** Releases the wasm memory now (otherwise released when garbage-collected). */
  free(): void;
}

/**
 * Loads the session and resumes it (`null`/`undefined` from `load` starts a new one). Rejects
 * with a `ConfigError` (`code: 'AK_CONFIG_INVALID'`) for a stored value that does not decode or
 * belongs to another session or definition, and for a definition with `conversation`.
 */
export function resumeChatSession(
  definition: { id: SafeId; revision?: number; conversation?: never },
  options: ResumeChatSessionOptions,
): Promise<ChatSession>;

/** The SessionStorage port a host implements: atomic compare-and-set on `cursor`. */
export interface SessionStorage {
  load(sessionId: SafeId, signal?: AbortSignal): unknown | Promise<unknown>;
  /** `expectedCursor` undefined: create only if absent. Resolves `false` on conflict. */
  save(snapshot: SessionSnapshot, expectedCursor: number | undefined, signal?: AbortSignal): boolean | Promise<boolean>;
  delete?(sessionId: SafeId, signal?: AbortSignal): unknown;
}

/** In-memory SessionStorage backed by the Rust adapter. **Not durable.** */
export class MemorySessionStorage implements SessionStorage {
  private constructor();
  load(sessionId: SafeId): Promise<SessionSnapshot | undefined>;
  save(snapshot: SessionSnapshot | string, expectedCursor?: number | null): Promise<boolean>;
  delete(sessionId: SafeId): Promise<boolean>;
  free(): void;
}

export function createMemorySessionStorage(): MemorySessionStorage;

// ---- Chat handler ----

/** Canonical messages of one chat, loaded before a turn and saved after it. */
export interface ChatMemory {
  /** The saved conversation (empty when none). `signal` aborts with the turn's deadline. */
  load(options: { signal?: AbortSignal }): Message[] | Promise<Message[]>;
  /**
   * Replaces the saved conversation. `signal` aborts when the cleanup budget is spent. A turn's
   * saves carry `fence`, its claim's generation (it grows from claim to claim): a memory that
   * keeps the highest fence it saved under should refuse (reject) a save with a lower one, so a
   * save that outlived its turn's lease cannot overwrite a newer turn's conversation. The
   * package's memories do; `turnkeep/testing/chat-memory-conformance` checks yours.
   */
  save(messages: Message[], options: { signal?: AbortSignal; fence?: number }): unknown;
}

/** In-memory ChatMemory backed by the Rust adapter. **Not durable.** */
export interface MemoryChatMemory extends ChatMemory {
  load(): Promise<Message[]>;
  /**
   * Rejects with the first invalid field when `messages` is not a valid message array, and when
   * a save under a higher `fence` came first (nothing is stored then).
   */
  save(messages: Message[], options?: { fence?: number }): Promise<void>;
  free(): void;
}

export function createMemoryChatMemory(): MemoryChatMemory;

/** A chunk a host model yields. */
export type ModelChunk =
  | { type: 'text'; text: string }
  /** The model's reasoning (kept in the message's `metadata.reasoning`, never in its text). */
  | { type: 'reasoning'; text: string }
  | { type: 'tool-call'; index: number; id?: string; name?: string; argsDelta?: string }
  | {
      type: 'finish';
      reason: 'stop' | 'length' | 'tool-calls' | 'content-filter' | (string & {});
      usage?: { promptTokens: number; completionTokens: number; totalTokens?: number };
    };

export interface ModelRequest {
  messages: Message[];
  tools: { name: string; description: string; parameters: Record<string, unknown>; requiresConfirmation: boolean }[];
  /** The definition's call settings, only those set. */
  settings: CallSettings;
}

/** A definition's call settings, in the AI SDK's names (what every model call is made with). */
export interface CallSettings {
  /** The system instructions, sent before the conversation (AgentsKit's `systemPrompt`). At most 65536 characters. */
  instructions?: string;
  /** 0 to 2. */
  temperature?: number;
  /** 1 to 1000000. */
  maxOutputTokens?: number;
  /** 0 to 1. */
  topP?: number;
  /** At most 16 non-empty strings of at most 256 characters. */
  stopSequences?: string[];
  /** Must name one of the definition's tools (`{ type: 'tool', toolName }`). */
  toolChoice?: 'auto' | 'none' | 'required' | { type: 'auto' | 'none' | 'required' } | { type: 'tool'; toolName: string };
  /** Per provider (`{ anthropic: {...} }`), bounded JSON: AI SDK models only. */
  providerOptions?: Record<string, Record<string, unknown>>;
}

/**
 * An AI SDK language model: `LanguageModelV2`, `V3` or `V4` of `@ai-sdk/provider` (every
 * `@ai-sdk/*` provider's model, `workers-ai-provider`'s, `ai/test`'s mocks), told apart by
 * `specificationVersion` and driven through `doStream` (turnkeep needs no `ai` at run time).
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: 'v2' | 'v3' | 'v4';
  readonly provider?: string;
  readonly modelId?: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  doStream(options: any): PromiseLike<{ stream: ReadableStream<any> | AsyncIterable<any> }>;
}

/** Any object with `stream(request, { signal })` is a model. */
export interface HostModel {
  stream(
    request: ModelRequest,
    options: { signal: AbortSignal },
  ): AsyncIterable<ModelChunk> | Iterable<ModelChunk> | Promise<AsyncIterable<ModelChunk> | Iterable<ModelChunk>>;
}

export interface DemoModel {
  readonly kind: 'turnkeep.demo';
  readonly chunkDelayMs: number;
}

export interface OpenAICompatibleModel {
  readonly kind: 'turnkeep.openai-compatible';
  readonly baseUrl: string;
  readonly model: string;
  readonly includeUsage: boolean;
}

/** A chunk an AgentsKit adapter streams (`@agentskit/core` `StreamChunk`). */
export interface AgentsKitStreamChunk {
  type: 'text' | 'tool_call' | 'tool_result' | 'reasoning' | 'usage' | 'error' | 'done';
  content?: string;
  /** A whole tool call; `args` is its JSON text. */
  toolCall?: { id: string; name: string; args: string; result?: string };
  usage?: Usage;
  metadata?: Record<string, unknown>;
}

/** An AgentsKit adapter (`AdapterFactory`): `createSource(request)` returns `{ stream, abort }`. */
export interface AgentsKitAdapter {
  createSource(request: {
    /** The definition's `systemPrompt` first (as AgentsKit's controller puts it), then the conversation. */
    messages: ChatMessage[];
    context?: {
      systemPrompt?: string;
      temperature?: number;
      maxTokens?: number;
      tools?: { name: string; description?: string; schema?: Record<string, unknown>; requiresConfirmation?: boolean }[];
    };
  }): { stream(): AsyncIterableIterator<AgentsKitStreamChunk>; abort(): void };
}

export type ChatModel = AiSdkLanguageModel | DemoModel | OpenAICompatibleModel | HostModel | AgentsKitAdapter;

/**
 * A Standard Schema object (a zod 4 schema, ...): `~standard.validate` checks a call's input
 * before `execute` (which gets its `value`), and `~standard.jsonSchema.input()` is what the model
 * is told (Standard JSON Schema; a schema without it is refused).
 */
export interface StandardSchemaLike {
  readonly '~standard': {
    validate(value: unknown): unknown;
    jsonSchema?: { input(options: { target: string }): unknown };
  };
}

/**
 * A tool the model may call. `parameters` is a JSON Schema object (the input is checked against
 * it before `execute`: what breaks it never runs, the model reads why) or a Standard Schema
 * object; `execute` must honour `signal`.
 */
export interface ChatTool {
  /** 1 to 64 of A-Z a-z 0-9 _ - */
  name: string;
  description: string;
  parameters: Record<string, unknown> | StandardSchemaLike;
  /** (AgentsKit's tools have `schema`.) */
  schema?: undefined;
  /** A person must approve each call (`client.confirmation.resolve`) before it runs. */
  requiresConfirmation?: boolean;
  execute(args: Record<string, unknown>, context: ToolContext): unknown;
}

/** An AgentsKit `ToolDefinition`: `schema`, `execute(args, { messages, call })` (async iterables joined). */
export interface AgentsKitTool {
  name: string;
  description?: string;
  schema?: Record<string, unknown> | StandardSchemaLike;
  /** (turnkeep's tools have `parameters`.) */
  parameters?: undefined;
  requiresConfirmation?: boolean;
  execute(
    args: Record<string, unknown>,
    context: { messages: ChatMessage[]; call: ToolCall } & ToolContext,
  ): unknown;
  tags?: string[];
  category?: string;
}

export interface ToolContext {
  /** Aborted when the turn stops. */
  signal: AbortSignal;
  toolCallId: string;
  /**
   * The same for every run of this call: `<sessionId>:<turnId>:<toolCallId>`, or, for a call a
   * person approved, its confirmation token. turnkeep records each call before it runs and its
   * result before the model reads it; a call runs again (with this key) only when its turn is
   * retried after its process died, or its store failed, between the call's start and the record
   * of its result. Record the key with the effect, and answer a key you have seen with the
   * result you recorded: the effect then happens once, unless the process dies inside your tool
   * between the effect and your record. Absent only when a tool is run outside a turn.
   */
  idempotencyKey?: string;
}

/** `defineChat`'s options: an option it does not know is a config error naming it. */
export interface ChatDefinitionOptions extends Omit<CallSettings, 'instructions'> {
  id: SafeId;
  /** Defaults to 1. */
  revision?: number;
  model: ChatModel;
  /** The system instructions every model call starts with (AgentsKit's `systemPrompt`). */
  instructions?: string;
  memory: ChatMemory;
  tools?: readonly ChatTool[];
  /** 0 to 50, default 5. */
  maxToolIterations?: number;
  initialMessages?: readonly Message[];
  /** A conversation statechart: stored conversation state is validated against it. */
  conversation?: ConversationDefinition;
}

export interface ChatDefinition extends Readonly<Omit<ChatDefinitionOptions, 'tools' | 'initialMessages' | 'maxToolIterations'>> {
  readonly id: SafeId;
  readonly revision?: number;
  readonly model: ChatModel;
  readonly memory: ChatMemory;
  readonly tools: readonly ChatTool[];
  readonly maxToolIterations: number;
  readonly initialMessages: readonly Message[];
  readonly conversation?: ConversationDefinition;
}

/**
 * Reads a definition with the one reader `createChatHandler` uses: turnkeep's options, or
 * AgentsKit Chat's definition (returned as it is, frozen). Throws an Error with
 * `code: 'SERVER_INVALID_CONFIG'` naming the first bad, unknown or unsupported option.
 */
export function defineChat(options: ChatDefinitionOptions): ChatDefinition;
export function defineChat<T extends AgentsKitChatDefinition>(definition: T): Readonly<T>;

/** An AgentsKit `ChatMemory`: `save` is handed AgentsKit Messages (`createdAt` a Date). */
export interface AgentsKitChatMemory {
  load(options?: { signal?: AbortSignal }): (ChatMessage | Message)[] | Promise<(ChatMessage | Message)[]>;
  save(messages: ChatMessage[], options?: { signal?: AbortSignal }): unknown;
}

/** An AgentsKit `AgentEvent`, as `chat.observers` are told them. */
export type AgentsKitEvent =
  | { type: 'llm:start'; messageCount: number }
  | { type: 'llm:first-token'; latencyMs: number }
  | { type: 'llm:end'; content: string; usage?: { promptTokens: number; completionTokens: number }; durationMs: number }
  | { type: 'tool:start'; name: string; args: Record<string, unknown> }
  | { type: 'tool:end'; name: string; result: string; durationMs: number }
  | { type: 'memory:load'; messageCount: number }
  | { type: 'memory:save'; messageCount: number }
  | { type: 'error'; error: Error };

/**
 * AgentsKit Chat's `ChatDefinition`, as `resolveDefinition` (or `defineChat`) takes it. `memory`
 * is required (turnkeep saves every conversation). `chat.skills`, `retriever`, `onMessage`,
 * `onToolCall` and `authorizeToolCall` are refused with a config error (README, "AgentsKit Chat
 * compatibility").
 */
export interface AgentsKitChatDefinition {
  id: SafeId;
  /** Defaults to 1. */
  revision?: number;
  chat: {
    /** An AgentsKit adapter, or any model turnkeep takes (an AI SDK model, ...). */
    adapter: ChatModel;
    memory: AgentsKitChatMemory;
    tools?: readonly (AgentsKitTool | ChatTool)[];
    maxToolIterations?: number;
    initialMessages?: readonly (ChatMessage | Message)[];
    systemPrompt?: string;
    temperature?: number;
    maxTokens?: number;
    observers?: readonly { name: string; on(event: AgentsKitEvent): void | Promise<void> }[];
    onError?(error: Error): void;
    /** Checks an AgentsKit tool's input against its `schema` before it runs. */
    validateArgs?(
      schema: Record<string, unknown>,
      args: Record<string, unknown>,
    ): { valid: boolean; errors?: { path: string; message: string }[]; message?: string };
  };
  conversation?: ConversationDefinition;
  /** Read by AgentsKit's renderers, not its server: accepted, no effect here. */
  components?: unknown;
  choiceSubmission?: unknown;
}

/** The deterministic demo model (no network). `chunkDelayMs` 0 to 60000, default 20. */
export function createDemoModel(options?: { chunkDelayMs?: number }): DemoModel;

/** A model behind `POST {baseUrl}/chat/completions` with `stream: true`. */
export function createOpenAICompatibleModel(options: {
  baseUrl: string;
  apiKey?: string;
  model: string;
  includeUsage?: boolean;
}): OpenAICompatibleModel;

export type AuthenticateResult<Context> = { ok: true; context: Context } | { ok: false; response: Response };

export interface ChatHandlerOptions<Context = unknown> {
  /** Runs before a byte of the body is read. Absent: anonymous (`context` undefined). */
  authenticate?(request: Request, signal: AbortSignal): AuthenticateResult<Context> | Promise<AuthenticateResult<Context>>;
  resolveDefinition(
    context: Context,
    sessionId: SafeId,
    signal: AbortSignal,
  ): ChatDefinition | AgentsKitChatDefinition | Promise<ChatDefinition | AgentsKitChatDefinition>;
  sessionStorage(context: Context, signal: AbortSignal): SessionStorage | Promise<SessionStorage>;
  /** Deadline of the whole turn, default 30000. */
  timeoutMs?: number;
  /** Budget of the cleanup after the turn, default 5000. */
  cleanupTimeoutMs?: number;
  /** Request body limit, default 65536. */
  maxBodyBytes?: number;
  /** Clock override (epoch ms), for tests. */
  now?(): number;
  /** Id generator override, for tests. */
  createId?(): string;
  /**
   * The session's durable log. With one, every turn is published to it as it runs, a client
   * that goes away no longer stops the turn, and `client.turn.stop` stops it from any client.
   */
  sessionLog?(context: Context, sessionId: SafeId, signal: AbortSignal): SessionLog | undefined | Promise<SessionLog | undefined>;
  /** Every fault (host callback, storage, memory, model, tool, log), with what was thrown. */
  onError?(error: unknown, info: { stage: FaultStage; sessionId?: SafeId; turnId?: SafeId }): void;
  /** How long a tool confirmation stays approvable, default 300000 (5 min). */
  confirmationTtlMs?: number;
  /**
   * The snapshot stream's byte budget (a positive integer, default 32768): after a line of `b`
   * bytes the next waits `b / snapshotBytesPerSecond`, at least one frame and never more than
   * 225 ms from a change's arrival (README, "Bytes on the wire: how snapshots are paced").
   */
  snapshotBytesPerSecond?: number;
  /**
   * A model stream that sent a chunk and then nothing for this long (a positive integer, default
   * 10000) has stalled: it is aborted, the turn ends as a model failure (its messages saved, its
   * lease released) and `onError` gets `stage: 'model'` with the cause. Checked at ticks of half
   * of it, so a stall ends between 1 and 1.5 times it after the last chunk. The time to the first
   * chunk is bounded by `timeoutMs` alone (a reasoning model may think silently before it).
   */
  modelStallMs?: number;
  /**
   * What a send does while another turn runs in its session (README, "A send while a turn runs"):
   * `'reject'` (default) answers `409 SESSION_BUSY`; `'queue'` holds the request open and runs it
   * after the turns queued before it, in arrival order (at most 8 waiting: `409
   * SESSION_QUEUE_FULL`); `'latest'` stops the running turn through the session log (so it needs
   * `sessionLog`) and runs this one, replacing a send still waiting (`409 TURN_SUPERSEDED`).
   */
  sendPolicy?: 'reject' | 'queue' | 'latest';
  /**
   * How long a queued send waits for its turn before it answers `409 SESSION_QUEUE_TIMEOUT`: a
   * positive integer below `timeoutMs` (the wait counts against the request's deadline), default
   * 20000 or half of `timeoutMs` when that is smaller.
   */
  sendQueueWaitMs?: number;
  /**
   * Asked before a turn-starting request (a send, an approval's decision) claims anything:
   * `{ ok: false, retryAfterMs? }` answers `429 CHAT_RATE_LIMITED` (with `retry-after` in whole
   * seconds when given). Bounded and isolated: a hook that throws, answers anything else or takes
   * over 500 ms lets the request go on, and `onError` gets `stage: 'rateLimit'`.
   */
  rateLimit?(input: { context: Context; sessionId: SafeId; signal: AbortSignal }):
    | { ok: true } | { ok: false; retryAfterMs?: number }
    | Promise<{ ok: true } | { ok: false; retryAfterMs?: number }>;
  /**
   * Each turn's end, after its cleanup. Like `onMetric` and `tracer`: called, never awaited; a
   * throw or a rejection goes to `onError` (`stage: 'onTurnEnd'`), so a slow or broken hook never
   * delays or breaks a turn.
   */
  onTurnEnd?(event: TurnEndEvent): unknown;
  /** Each ended turn's metrics, one call per record (`stage: 'onMetric'` for its faults). */
  onMetric?(metric: ChatMetric): unknown;
  /**
   * An OpenTelemetry Tracer (`trace.getTracer(...)` of the host's `@opentelemetry/api`): each
   * ended turn becomes an `invoke_agent` span with a `chat` span per model call, an
   * `execute_tool` span per tool run and an `approval` span per approval under it, with gen_ai.*
   * attributes, at the handler's clock's times (`stage: 'tracer'` for its faults).
   */
  tracer?: ChatTracer;
}

/**
 * One metric of an ended turn, for `onMetric` (ids and numbers, never message text): the Ask
 * handler's shape with the turn's ids. `outcome`: `ok` (answered, or waiting for a person),
 * `cancelled` (stopped, or taken over), `error` (failed, timed out, or not saved whole).
 */
export interface ChatMetric {
  protocol: 'turnkeep.chat.turn-metric';
  version: 1;
  name:
    | 'turn.duration_ms' | 'turn.first_chunk_ms' | 'model.calls' | 'tool.calls' | 'approval.requested'
    | 'usage.input_tokens' | 'usage.output_tokens' | 'usage.total_tokens';
  sessionId: SafeId;
  turnId: SafeId;
  value: number;
  unit: 'ms' | 'count' | 'tokens';
  outcome: 'ok' | 'cancelled' | 'error';
  /** The handler's clock at the turn's end, as an ISO timestamp. */
  emittedAt: string;
}

/** What the chat handler uses of an `@opentelemetry/api` Tracer (pass the host's own). */
export interface ChatTracer {
  startSpan(
    name: string,
    options?: { kind?: number; startTime?: Date; attributes?: Record<string, string | number | string[]> },
    context?: any,
  ): { setStatus(status: { code: number; message?: string }): unknown; end(endTime?: Date): void };
}

/**
 * One ended turn, for `onTurnEnd` (no message text). `finishReason`: `stop` (the model
 * finished), `tool-calls` (a call waits for a person), `stopped`, `timeout`, `fenced` (a newer
 * claim took the session over), `error` (the model or a step failed).
 */
export interface TurnEndEvent {
  sessionId: SafeId;
  turnId: SafeId;
  /** The terminal history's record: `indeterminate` when the messages could not be saved. */
  outcome: 'completed' | 'indeterminate';
  finishReason: 'stop' | 'tool-calls' | 'stopped' | 'timeout' | 'fenced' | 'error';
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  /** From the claim to the end of cleanup, on the handler's clock (`now`). */
  durationMs: number;
  /** The registry code that closed the sender's response, when one did. */
  errorCode?: string;
}

/** Where a fault happened (`onError`). */
export type FaultStage =
  | 'authenticate' | 'resolveDefinition' | 'sessionStorage' | 'session.load' | 'session.resume'
  | 'session.save' | 'memory.load' | 'memory.save' | 'model' | 'tool' | 'sessionLog' | 'stream'
  | 'rateLimit' | 'onTurnEnd' | 'onMetric' | 'tracer';

/** What a host that can keep work alive past the response passes (a Worker's `ctx`). */
export interface HandlerHost {
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * `Request` in, `Response` out (an NDJSON stream of turn events, a stop answer, a confirmation
 * answer, or a diagnostic). Pass `host` (e.g. a Worker's `ctx`) so a turn outlives its response.
 */
export interface ChatHandler {
  (request: Request, host?: HandlerHost): Promise<Response>;
  /**
   * Confirmations a crashed continuation left `approving` / `rejecting` / `expiring` (its lease
   * lapsed). `context` is what `authenticate` would have given (storage is resolved from it).
   */
  listStuckConfirmations(sessionId: SafeId, options?: { context?: unknown; signal?: AbortSignal }): Promise<Confirmation[]>;
  /**
   * Finishes a stuck confirmation by compare-and-set, into `resolution` or by default the final
   * status of its processing state (`approving` → `approved`: the tool may have run; it is never
   * run again). Rejects with `code` `CONFIRMATION_NOT_FOUND`, `CONFIRMATION_NOT_STUCK`,
   * `CONFIRMATION_INVALID_RESOLUTION` or a boundary code.
   */
  reconcileConfirmation(
    sessionId: SafeId,
    token: SafeId,
    options?: { resolution?: 'approved' | 'rejected' | 'expired'; context?: unknown; signal?: AbortSignal },
  ): Promise<Confirmation>;
}

/** Throws an Error with `code: 'SERVER_INVALID_CONFIG'` for bad options. */
export function createChatHandler<Context = unknown>(options: ChatHandlerOptions<Context>): ChatHandler;

// ---- The AI SDK UI message stream (ai 7: useChat, DefaultChatTransport) ----

/** An AI SDK `UIMessage` as turnkeep writes it (one assistant message per turn). */
export interface UIMessage {
  id: string;
  role: 'system' | 'user' | 'assistant';
  metadata?: unknown;
  parts: Array<Record<string, unknown> & { type: string }>;
}

/**
 * The UI message stream routes, one function for all of them (mount it at `{api}`,
 * `{api}/[id]/stream`, `{api}/[id]/stop`, `{api}/[id]/messages` and `{api}/[id]/hydrate`):
 * `POST {api}` a turn (what `DefaultChatTransport` sends: the user's message, a regeneration,
 * or answered tool approvals; or an AG-UI `RunAgentInput`), `GET {api}/:id/stream` the running
 * turn from its start (204 when none), `POST {api}/:id/stop` stops it, `GET {api}/:id/messages`
 * `{ messages: UIMessage[] }`, `POST {api}/:id/messages` a turn as the Durable Streams TanStack
 * transport sends it (`{ messages, data }`, 202), `GET {api}/:id/hydrate` TanStack's
 * `{ messages, activeRun, interrupts }`.
 */
export interface UIMessageChatHandler {
  (request: Request, host?: HandlerHost): Promise<Response>;
}

/**
 * `createChatHandler`'s pipeline speaking the AI SDK's UI message stream. Its options are
 * createChatHandler's; `maxBodyBytes` defaults to 4 MiB (the stock transport sends the whole
 * conversation with every request; only the last message is read). Resuming, stopping from
 * another client and a lost decision's follow need `sessionLog`. Throws an Error with
 * `code: 'SERVER_INVALID_CONFIG'` for bad options.
 */
export function createUIMessageChatHandler<Context = unknown>(options: ChatHandlerOptions<Context>): UIMessageChatHandler;

/**
 * A session log in the host's database (`turnkeep/redis`, `turnkeep/postgres`, any
 * `SessionLog`) served read-only over the Durable Streams read protocol (`?offset=`,
 * `live=long-poll|sse`), so a page's `createChatConnection` follows the session without a
 * streams server. `log(request)` says which log the request may read, after the host's own
 * authorization: a log, a `Response` to answer with (a refusal), or nothing (404). An SSE read
 * lasts `sseMs` (default 60000), then the client reads again from its offset. Throws an Error
 * with `code: 'SERVER_INVALID_CONFIG'` for bad options.
 */
export function createSessionLogHandler(options: {
  log(request: Request): SessionLog | Response | null | undefined | Promise<SessionLog | Response | null | undefined>;
  onError?(error: unknown): void;
  sseMs?: number;
}): (request: Request) => Promise<Response>;

/** A conversation (a projection's or `ChatMemory`'s messages) as `UIMessage[]`, for `useChat({ messages })`. */
export function toUIMessages(messages: Message[], confirmations?: LogConfirmation[]): UIMessage[];

// ---- TanStack AI / AG-UI ----

/** A TanStack AI stream chunk: an AG-UI event as the session log holds it. */
export type TanStackChunk = Record<string, unknown> & { type: string };

/** An AG-UI interrupt (a call waiting for a person; `id` is its confirmation token). */
export interface TanStackInterrupt {
  id: string;
  reason: 'approval_required';
  toolCallId: string;
  expiresAt?: string;
  metadata: { kind: 'approval'; toolName: string; input: Record<string, unknown> };
}

/** What `hydrate` restores: TanStack's `ChatHydrationResult`. */
export interface TanStackHydration {
  /** TanStack UI messages (a snapshot's `nativeMessages`). */
  messages: unknown[];
  /** The running turn; null when none runs or when calls wait for a person. */
  activeRun: { runId: string } | null;
  interrupts: { runId: string; pending: TanStackInterrupt[] } | null;
}

/**
 * TanStack's `hydrate` rule: a projection snapshot (`resolveChatSnapshot`'s, a connection's
 * `snapshot()`) as `{ messages, activeRun, interrupts }` (`toTanStackConnection` performs it in
 * the page; a server can answer a hydrate read with it).
 */
export function toTanStackHydration(snapshot: Pick<ChatSnapshot, 'messages'> & Partial<ChatSnapshot>): TanStackHydration;

// ---- Durable chat: session logs and the one projection ----

/** An idempotent producer's stamp: Durable Streams fencing (`Producer-Id/Epoch/Seq`). */
export interface ProducerStamp {
  id: string;
  epoch: number;
  seq: number;
}

/** A session's append-only chunk log (TanStack AI / AG-UI chunks). */
export interface SessionLog {
  /**
   * Appends chunks (values, or their JSON texts) as one batch. Throws a `ChatProducerError`
   * (`kind` 'stale-epoch' | 'sequence-gap' | 'stream-closed' | 'retryable') on refusal.
   */
  append(chunks: unknown[], options?: { producer?: ProducerStamp; signal?: AbortSignal }): Promise<{ offset: string; duplicate?: boolean }>;
  /** Chunks after `offset` (from the start without one; `'now'`: the tail). */
  read(options?: { offset?: string; waitMs?: number; signal?: AbortSignal }): Promise<{ chunks: unknown[]; offset: string | null; upToDate: boolean }>;
}

/** An in-memory session log. Not durable: tests and demos. */
export class MemorySessionLog implements SessionLog {
  private constructor();
  append(chunks: unknown[], options?: { producer?: ProducerStamp; signal?: AbortSignal }): Promise<{ offset: string; duplicate?: boolean }>;
  read(options?: { offset?: string; waitMs?: number; signal?: AbortSignal }): Promise<{ chunks: unknown[]; offset: string | null; upToDate: boolean }>;
}
export function createMemorySessionLog(): MemorySessionLog;

/** A session log on any Durable Streams server (`url` is the stream's URL). */
export class DurableStreamsLog implements SessionLog {
  private constructor();
  readonly url: string;
  append(chunks: unknown[], options?: { producer?: ProducerStamp; signal?: AbortSignal }): Promise<{ offset: string; duplicate?: boolean }>;
  read(options?: { offset?: string; waitMs?: number; signal?: AbortSignal }): Promise<{ chunks: unknown[]; offset: string | null; upToDate: boolean }>;
}
export interface DurableStreamsTarget {
  url: string;
  headers?: HeadersInit;
  fetch?: (request: Request) => Promise<Response>;
}
export function createDurableStreamsLog(options: DurableStreamsTarget): DurableStreamsLog;

/** The item store a store-backed log runs on (Redis, Postgres...): fencing is decided in Rust. */
export interface SessionLogStore {
  /** The head's JSON text, or null for a log never written. */
  head(options: { signal: AbortSignal }): Promise<string | null> | string | null;
  /** Atomically stores `items` after the others and `head`, if the stored head's version is `expectedVersion`. */
  commit(expectedVersion: number | null, items: string[], head: string, options: { signal: AbortSignal }): Promise<boolean> | boolean;
  /** Up to `limit` item texts from position `from`. */
  items(from: number, limit: number, options: { signal: AbortSignal }): Promise<string[]> | string[];
}
export class StoreSessionLog implements SessionLog {
  private constructor();
  append(chunks: unknown[], options?: { producer?: ProducerStamp; signal?: AbortSignal }): Promise<{ offset: string; duplicate?: boolean }>;
  read(options?: { offset?: string; waitMs?: number; signal?: AbortSignal }): Promise<{ chunks: unknown[]; offset: string | null; upToDate: boolean }>;
}
export function createStoreSessionLog(options: { store: SessionLogStore }): StoreSessionLog;

/** What a UI draws: a message's reasoning (drawn collapsed), its text, and one card per tool call. */
export type RenderPart =
  | { type: 'reasoning'; messageId: string; role: MessageRole; text: string; status: MessageStatus }
  | { type: 'text'; messageId: string; role: MessageRole; text: string; status: MessageStatus }
  | {
      type: 'tool';
      messageId: string;
      toolCallId: string;
      name: string;
      args: Record<string, unknown>;
      status: ToolCallStatus;
      result?: string;
      error?: string;
    };

export interface ChatSnapshot {
  /** Canonical messages (AgentsKit's shape), equal to what ChatMemory saved for completed turns. */
  messages: Message[];
  renderParts: RenderPart[];
  /** TanStack AI UI messages (`parts`), native batches kept whole. */
  nativeMessages: unknown[];
  /** The run (turn) started and not yet ended: what `client.turn.stop` names. */
  activeRunId: string | null;
  /** The tool confirmations the log shows (tokens to resolve, and how each ended). */
  confirmations: LogConfirmation[];
  /**
   * What the log has started and not yet ended that `messages` cannot say (open messages, the
   * argument text of calls still streaming, reasoning spans, the newest chunk time): pass the
   * whole seed to `new ChatProjection(seed)` and a projection fed the suffix ends where the whole
   * log does, at any cut.
   */
  inFlight?: ChatInFlight;
  /** The session and definition revision the seed was stamped with (`resolveChatSnapshot`). */
  sessionId?: SafeId;
  definitionRevision?: number;
}

export interface ChatInFlight {
  messages: string[];
  toolArgs: Record<string, string>;
  reasoning: Record<string, string>;
  openReasoning: string[];
  lastMs: number;
}

/**
 * The session and definition revision a renderer is prepared for: a chunk or seed naming
 * another is refused with a `ChatIdentityError` (`RENDER_FOREIGN_SESSION`,
 * `RENDER_REVISION_MISMATCH`), nothing rendered. Unset: unchecked.
 */
export interface RendererIdentity {
  sessionId?: SafeId;
  definitionRevision?: number;
}

/** What a renderer throws for a chunk or seed of another session or revision. */
export interface ChatIdentityError extends Error {
  name: 'ChatIdentityError';
  code: 'RENDER_FOREIGN_SESSION' | 'RENDER_REVISION_MISMATCH';
  diagnostic: TurnDiagnostic & { version: 1 };
}

export interface LogConfirmation {
  token: string;
  toolCallId: string;
  action?: string;
  input: Record<string, unknown>;
  /** Epoch milliseconds, when the log says. */
  expiresAt?: number;
  status: ConfirmationStatus;
}

/** The one projection: chunks in log order → the conversation. */
export function projectChatSnapshot(chunks: unknown[]): ChatSnapshot;

/** The markup of a conversation (one `<article>` per message, every value escaped). */
export function renderChatHtml(renderParts: RenderPart[] | ChatSnapshot, identity?: RendererIdentity): string;
/** The same markup per message, so a live page replaces only the messages that changed. */
export function renderChatMessages(renderParts: RenderPart[] | ChatSnapshot, identity?: RendererIdentity): { id: string; html: string }[];

/** The same projection, fed incrementally (a live client). */
export class ChatProjection {
  /**
   * Empty, or starting from what a client already holds: a whole seed (`resolveChatSnapshot`'s
   * answer, a `snapshot()`), or messages (a seed's `messages` or `nativeMessages`, TanStack UI
   * messages) with the run still going then, the confirmations and what was in flight.
   * `sessionId` / `definitionRevision`: a seed or chunk of another is refused.
   */
  constructor(
    initial?: unknown[] | ChatSnapshot,
    options?: RendererIdentity & { activeRunId?: string; confirmations?: LogConfirmation[]; inFlight?: ChatInFlight },
  );
  feed(chunk: unknown): void;
  feedAll(chunks: unknown[]): void;
  snapshot(): ChatSnapshot;
  /** The markup of each message now (`renderChatMessages` of the render parts). */
  renderMessages(): { id: string; html: string }[];
  readonly activeRunId: string | null;
  readonly chunkCount: number;
}

/** Reads a session log from its start and projects it; `offset` is null for an empty log. */
export function resolveChatSnapshot(options: {
  target: SessionLog | DurableStreamsTarget;
  signal?: AbortSignal;
  /** Stamped on the seed, so renderers prepared for another session or revision refuse it. */
  sessionId?: SafeId;
  definitionRevision?: number;
}): Promise<ChatSnapshot & { offset: string | null }>;

// ---- The chat-stream proxy (the browser reads it with `turnkeep/client`) ----

/** Where the proxy reads: a stream URL, or one with headers and its own fetch. */
export type ChatStreamTarget = string | { url: string; headers?: HeadersInit; fetch?: (request: Request) => Promise<Response> };

export interface ChatStreamProxyOptions {
  /**
   * The stream to read, fixed or per request. A resolver that returns null refuses (403); one
   * that returns a Response answers with it (e.g. its own 401).
   */
  target: ChatStreamTarget | ((request: Request) => ChatStreamTarget | Response | null | undefined | Promise<ChatStreamTarget | Response | null | undefined>);
  /** The server-side streams credentials added to every upstream request. */
  auth?: HeadersInit | ((request: Request) => HeadersInit | Promise<HeadersInit>);
  /**
   * Appends (POST) through the proxy, with the server's credentials: off unless given. Without
   * it every method but GET and HEAD is 405 `STREAM_READ_ONLY`, before the target is resolved.
   * With it, a POST the target resolver let through is asked about: `authorize(request, target)`
   * (target: the stream URL the append goes to) returning `true` lets it through; a Response is
   * answered as is; anything else is 403 `STREAM_WRITE_FORBIDDEN`; a throw is 500 (to `onError`).
   */
  writes?: { authorize: (request: Request, target: string) => boolean | Response | Promise<boolean | Response> };
  fetch?: (request: Request) => Promise<Response>;
  /** What was thrown, for the operator (never sent to the client). */
  onError?: (report: { code: string; cause: unknown }) => void;
}

/**
 * The chat-stream proxy: GET and HEAD (and POST with `writes`) to the session's stream, body passed through
 * unbuffered, upstream failures as versioned diagnostics. Takes a Request or anything with `.req`.
 * Throws an Error with `code: 'STREAM_PROXY_INVALID_CONFIG'` for bad options.
 */
export function createChatStreamProxy(options: ChatStreamProxyOptions): (input: Request | { req: Request }) => Promise<Response>;

/** Why a session log refused an append. */
export type ChatProducerErrorKind = 'stale-epoch' | 'sequence-gap' | 'stream-closed' | 'retryable' | 'failed';

/**
 * A refused append (`toChatResponse`, a log's `append`). `instanceof` holds for errors made by
 * the wasm and by host logs alike. `currentEpoch` comes with 'stale-epoch' (a newer claim owns
 * the turn; nothing from this writer was stored), `expectedSeq`/`receivedSeq` with 'sequence-gap'.
 */
export class ChatProducerError extends Error {
  constructor(
    message: string,
    options: { kind: ChatProducerErrorKind; currentEpoch?: number; expectedSeq?: number; receivedSeq?: number; cause?: unknown },
  );
  readonly name: 'ChatProducerError';
  readonly kind: ChatProducerErrorKind;
  readonly currentEpoch?: number;
  readonly expectedSeq?: number;
  readonly receivedSeq?: number;
}

/** A TanStack AI UI message (`parts` kept whole, unknown part types included). */
export interface ChatUIMessage {
  id?: string;
  role: 'user' | 'assistant' | 'system';
  parts: Array<{ type: string; [key: string]: unknown }>;
  metadata?: Record<string, unknown>;
  createdAt?: string | Date;
  [key: string]: unknown;
}
/** A TanStack AI model message: content (text or content parts), tool calls, tool results. */
export interface ChatModelMessage {
  id?: string;
  role: 'user' | 'assistant' | 'system' | 'tool';
  content: string | null | Array<{ type: string; [key: string]: unknown }>;
  toolCalls?: Array<{ id: string; type?: 'function'; function: { name: string; arguments?: string } }>;
  toolCallId?: string;
  [key: string]: unknown;
}
/** The plain form. */
export interface ChatPlainMessage {
  id: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
}
export type ChatSendMessage = ChatUIMessage | ChatModelMessage | ChatPlainMessage;

export interface ChatResponseOptions {
  /** The session's log, or a Durable Streams stream (`{ url, headers?, fetch? }`). */
  target: SessionLog | DurableStreamsTarget;
  /**
   * Required. Called before the log is touched; false (or a falsy value) → 403
   * `SESSION_FORBIDDEN`, a throw → 500 `SERVER_INTERNAL` (cause to `onError`). Pass `false` only
   * where the caller authorized by other means (a background executor under its own claim).
   */
  authorize: ((request: Request, sessionId: SafeId) => boolean | Promise<boolean>) | false;
  /** The request `authorize` checks (required with an `authorize` function). */
  request?: Request;
  /** Passed to `authorize` and `onError`; required with an `authorize` function. */
  sessionId?: SafeId;
  /** Messages to persist before the answer: echoed as text, then one native batch with the complete state. */
  newMessages?: readonly ChatSendMessage[];
  /** The host's model stream: TanStack AI / AG-UI chunks (`content` is dropped from TEXT_MESSAGE_CONTENT). */
  source?: AsyncIterable<unknown> | Iterable<unknown>;
  /** 'immediate' (default): 202 once the new messages are stored; 'await': 200 once everything is. */
  mode?: 'immediate' | 'await';
  /** Fencing: every chunk its own batch, seq = its index in the turn; the caller owns the epoch. */
  producer?: { id: string; epoch: number };
  /** Keeps the rest of an 'immediate' response alive (a Worker's `ctx.waitUntil`). */
  waitUntil?: (promise: Promise<unknown>) => void;
  /** Failures the client does not see (default `console.error`). */
  onError?: (error: unknown, info: { stage: 'authorize' | 'newMessages' | 'source' | 'session-log'; sessionId?: SafeId }) => void;
}

/**
 * Writes a session response for a host that runs its own model stream. Rejects with a
 * `ChatProducerError` when the log refuses the new messages (both modes) or the source's chunks
 * ('await'), with what the source threw ('await'), and with `code: 'SERVER_INVALID_CONFIG'` for
 * bad options.
 */
export function toChatResponse(options: ChatResponseOptions): Promise<Response>;

// ---- Node bridge ----

/**
 * Serves a Web-style handler from `node:http`. A client disconnect aborts the Request's signal.
 * Handler failures go to `onError` (default `console.error`); the client gets a bare 500.
 */
export function toNodeHandler(
  handler: ((request: Request) => Response | Promise<Response>) | { fetch(request: Request): Response | Promise<Response> },
  options?: { onError?: (error: unknown) => void },
): (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void;

/** The crate version of the loaded wasm build. */
export function version(): string;
