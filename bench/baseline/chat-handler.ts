// The TypeScript baseline of bench/turn.mjs: a chat handler that does the job AgentsKit Chat's
// `createChatHandler` does, step for step as AgentsKit's handler is described (its request checks,
// claim, stream and cleanup; written from that description, none of AgentsKit's code). AgentsKit's packages are not on npm, so
// this stands in for it. Where AgentsKit validates with zod schemas, this validates the same
// rules by hand, which is cheaper: a baseline that errs on the fast side.
//
// Per request: POST / content-type checks, a deadline (`AbortSignal.timeout` + the request's
// signal), the body read with a byte count, JSON parse, the submission checked, the definition
// and storage resolved, the session loaded and decoded, the turn claimed by one CAS save, the
// messages loaded, a controller (immutable states, one per chunk) started before the response.
// Per pulled state: one CAS save of the whole session (cursor + 1), the snapshot event built from
// canonical copies of the messages, checked, serialized, encoded. At the end: memory save, release.

type Role = 'user' | 'assistant' | 'system' | 'tool';
type Status = 'pending' | 'streaming' | 'complete' | 'error';
export interface Message {
  id: string;
  role: Role;
  content: string;
  status: Status;
  createdAt: string;
}
interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}
interface ChatState {
  messages: readonly Message[];
  status: 'idle' | 'streaming' | 'complete' | 'error';
  usage: Usage;
  error?: string;
}
interface Session {
  protocol: 'agentskit.chat.session';
  version: 1;
  sessionId: string;
  definitionId: string;
  definitionRevision: number;
  updatedAt: string;
  cursor: number;
  activeTurn?: { turnId: string; expiresAt: number };
  terminalTurns?: { turnId: string; outcome: 'completed' | 'indeterminate' }[];
  confirmations: unknown[];
}
export interface Storage {
  load(sessionId: string): Promise<unknown>;
  save(snapshot: Session, expectedCursor: number | undefined): Promise<boolean>;
}
export interface Memory {
  load(): Promise<Message[]>;
  save(messages: readonly Message[]): Promise<void>;
}
/** An AgentsKit-style adapter: `createSource(request)` → `{ stream(): AsyncIterable<chunk> }`. */
export interface Adapter {
  createSource(request: { messages: readonly Message[] }): { stream(): AsyncIterable<{ type: string; content?: string }> };
}
export interface Definition {
  id: string;
  revision?: number;
  chat: { adapter: Adapter; memory: Memory };
}
export interface Options {
  resolveDefinition(): Definition;
  sessionStorage(): Storage;
  timeoutMs?: number;
  cleanupTimeoutMs?: number;
  maxBodyBytes?: number;
}

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const encoder = new TextEncoder();

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const safeInt = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

function errorResponse(status: number, code: string, message: string, retryable = false): Response {
  return new Response(JSON.stringify({ error: { version: 1, code, message, retryable } }), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  });
}

async function readBoundedJson(request: Request, maxBytes: number): Promise<unknown> {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) throw new HttpError(413, 'REQUEST_TOO_LARGE', 'Request body is too large.');
  if (!request.body) throw new HttpError(400, 'REQUEST_INVALID_JSON', 'Request body is not valid JSON.');
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      await reader.cancel();
      throw new HttpError(413, 'REQUEST_TOO_LARGE', 'Request body is too large.');
    }
    parts.push(value);
  }
  const all = new Uint8Array(bytes);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.byteLength;
  }
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(all));
  } catch {
    throw new HttpError(400, 'REQUEST_INVALID_JSON', 'Request body is not valid JSON.');
  }
}

class HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

/** The submission's envelope and payload rules (the reference decodes every event this way). */
function decodeSubmit(v: unknown): { sessionId: string; turnId: string; input: string } | undefined {
  if (!isObject(v) || v.protocol !== 'agentskit.chat.turn' || v.version !== 1 || v.event !== 'client.turn.submit') return undefined;
  for (const key of ['eventId', 'sessionId', 'turnId']) if (typeof v[key] !== 'string' || !SAFE_ID.test(v[key] as string)) return undefined;
  if (!safeInt(v.sequence) || typeof v.emittedAt !== 'string' || !TIMESTAMP.test(v.emittedAt)) return undefined;
  if (!isObject(v.payload) || typeof v.payload.input !== 'string' || v.payload.input.trim() === '') return undefined;
  return { sessionId: v.sessionId as string, turnId: v.turnId as string, input: v.payload.input };
}

function decodeSession(v: unknown): Session | undefined {
  const s = typeof v === 'string' ? JSON.parse(v) : v;
  if (!isObject(s) || s.version !== 1 || s.protocol !== 'agentskit.chat.session') return undefined;
  if (!SAFE_ID.test(String(s.sessionId)) || !SAFE_ID.test(String(s.definitionId)) || !safeInt(s.cursor)) return undefined;
  if (!Array.isArray(s.confirmations) || typeof s.updatedAt !== 'string' || !TIMESTAMP.test(s.updatedAt)) return undefined;
  return structuredClone(s) as unknown as Session;
}

/** A canonical copy of a message, every rule checked (AgentsKit's `serializeMessages`). */
function canonical(m: Message): Message {
  if (typeof m.id !== 'string' || m.id === '') throw new Error('message id');
  if (!['user', 'assistant', 'system', 'tool'].includes(m.role)) throw new Error('message role');
  if (typeof m.content !== 'string') throw new Error('message content');
  if (!['pending', 'streaming', 'complete', 'error'].includes(m.status)) throw new Error('message status');
  if (!TIMESTAMP.test(m.createdAt)) throw new Error('message createdAt');
  return { id: m.id, role: m.role, content: m.content, status: m.status, createdAt: m.createdAt };
}

/** Immutable states, one per change, told to subscribers (as AgentsKit's core controller). */
class Controller {
  private state: ChatState;
  private listeners = new Set<() => void>();
  private stopped = false;
  private counter = 0;
  constructor(private adapter: Adapter, messages: readonly Message[]) {
    this.state = { messages, status: 'idle', usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 } };
  }
  getState(): ChatState {
    return this.state;
  }
  subscribe(f: () => void): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }
  stop(): void {
    this.stopped = true;
  }
  private set(next: ChatState): void {
    this.state = next;
    for (const f of this.listeners) f();
  }
  private id(): string {
    this.counter += 1;
    return `msg-${Date.now()}-${this.counter}`;
  }
  async send(input: string): Promise<void> {
    const now = new Date().toISOString();
    const user: Message = { id: this.id(), role: 'user', content: input, status: 'complete', createdAt: now };
    const assistant: Message = { id: this.id(), role: 'assistant', content: '', status: 'streaming', createdAt: now };
    this.set({ ...this.state, status: 'streaming', messages: [...this.state.messages, user, assistant] });
    const last = () => this.state.messages.length - 1;
    const replace = (patch: Partial<Message>) => {
      const messages = [...this.state.messages];
      messages[last()] = { ...messages[last()], ...patch };
      return messages;
    };
    try {
      for await (const chunk of this.adapter.createSource({ messages: this.state.messages }).stream()) {
        if (this.stopped) break;
        if (chunk.type === 'text' && chunk.content) {
          const usage = { ...this.state.usage, completionTokens: this.state.usage.completionTokens + 1 };
          usage.totalTokens = usage.promptTokens + usage.completionTokens;
          this.set({ ...this.state, usage, messages: replace({ content: this.state.messages[last()].content + chunk.content }) });
        }
      }
      this.set({ ...this.state, status: 'complete', messages: replace({ status: 'complete' }) });
    } catch {
      this.set({ ...this.state, status: 'error', error: 'CHAT_MODEL_FAILED', messages: replace({ status: 'error' }) });
    }
  }
}

export function createChatHandler(options: Options): (request: Request) => Promise<Response> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const cleanupTimeoutMs = options.cleanupTimeoutMs ?? 5_000;
  const maxBodyBytes = options.maxBodyBytes ?? 65_536;
  const leaseMs = timeoutMs + 3 * cleanupTimeoutMs;
  return async (request) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([request.signal, deadline]);
    try {
      if (request.method !== 'POST') return errorResponse(405, 'REQUEST_METHOD_NOT_ALLOWED', 'Only POST is supported.');
      if (!request.headers.get('content-type')?.toLowerCase().startsWith('application/json')) {
        return errorResponse(415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json.');
      }
      const submit = decodeSubmit(await readBoundedJson(request, maxBodyBytes));
      if (!submit) return errorResponse(400, 'REQUEST_INVALID_EVENT', 'Request body must be a valid turn submission.');
      const definition = options.resolveDefinition();
      const storage = options.sessionStorage();
      // Resume: absent → new session (cursor 0, first save creates it), else decoded.
      const stored = await storage.load(submit.sessionId);
      let session: Session;
      let saved: number | undefined;
      if (stored == null) {
        session = {
          protocol: 'agentskit.chat.session', version: 1, sessionId: submit.sessionId, definitionId: definition.id,
          definitionRevision: definition.revision ?? 1, updatedAt: new Date().toISOString(), cursor: 0, confirmations: [],
        };
      } else {
        const decoded = decodeSession(stored);
        if (!decoded || decoded.sessionId !== submit.sessionId || decoded.definitionId !== definition.id) throw new Error('resume');
        session = decoded;
        saved = decoded.cursor;
      }
      // One CAS write per session change: the full snapshot, cursor + 1.
      const persist = async () => {
        const next: Session = { ...session, cursor: (saved ?? 0) + 1, updatedAt: new Date().toISOString() };
        if (!(await storage.save(next, saved))) throw new HttpError(409, 'SESSION_CONFLICT', 'Another turn is active for this session.');
        session = next;
        saved = next.cursor;
      };
      const now = Date.now();
      if (session.terminalTurns?.some((t) => t.turnId === submit.turnId) || (session.activeTurn && session.activeTurn.expiresAt > now)) {
        return errorResponse(409, 'SESSION_BUSY', 'Another turn is active for this session.', true);
      }
      session = { ...session, activeTurn: { turnId: submit.turnId, expiresAt: now + leaseMs } };
      try {
        await persist();
      } catch {
        return errorResponse(409, 'SESSION_BUSY', 'Another turn is active for this session.', true);
      }
      const memory = definition.chat.memory;
      const history = await memory.load();
      const controller = new Controller(definition.chat.adapter, history);
      let pending: ChatState | undefined;
      let wake: (() => void) | undefined;
      let done = false;
      let closed = false;
      const unsubscribe = controller.subscribe(() => {
        const state = controller.getState();
        pending = { ...state, messages: [...state.messages], usage: { ...state.usage } };
        wake?.();
        wake = undefined;
      });
      const send = controller.send(submit.input).finally(() => {
        done = true;
        wake?.();
        wake = undefined;
      });
      const cleanup = async () => {
        if (closed) return;
        closed = true;
        unsubscribe();
        await send.catch(() => undefined);
        let outcome: 'completed' | 'indeterminate' = 'completed';
        try {
          await memory.save(controller.getState().messages);
        } catch {
          outcome = 'indeterminate';
        }
        const terminal = (session.terminalTurns ?? []).filter((t) => t.turnId !== submit.turnId);
        terminal.push({ turnId: submit.turnId, outcome });
        const { activeTurn: _released, ...rest } = session;
        session = { ...rest, terminalTurns: terminal.slice(-64) } as Session;
        await persist();
      };
      const body = new ReadableStream<Uint8Array>(
        {
          async pull(stream) {
            while (!pending && !done && !signal.aborted) await new Promise<void>((resolve) => (wake = resolve));
            if (pending) {
              const state = pending;
              pending = undefined;
              await persist();
              const event = {
                protocol: 'agentskit.chat.turn', version: 1, eventId: crypto.randomUUID(), sessionId: submit.sessionId,
                turnId: submit.turnId, sequence: saved, emittedAt: new Date().toISOString(), event: 'server.turn.snapshot',
                payload: {
                  messages: state.messages.map(canonical),
                  status: state.status === 'error' ? 'error' : state.status === 'streaming' ? 'streaming' : state.messages.length === 0 ? 'idle' : 'complete',
                  usage: state.usage,
                  ...(state.error ? { error: { version: 1, code: 'CHAT_TURN_FAILED', message: 'The chat turn failed.', retryable: true } } : {}),
                  lineage: { operation: 'submit' },
                },
              };
              // The reference checks the event it built, and again when it encodes it.
              for (let check = 0; check < 2; check += 1) {
                if (!SAFE_ID.test(event.eventId) || !TIMESTAMP.test(event.emittedAt) || !safeInt(event.sequence)) throw new Error('event');
                event.payload.messages.forEach(canonical);
              }
              stream.enqueue(encoder.encode(`${JSON.stringify(event)}\n`));
              return;
            }
            await cleanup();
            stream.close();
          },
          async cancel() {
            controller.stop();
            await cleanup().catch(() => undefined);
          },
        },
      );
      return new Response(body, {
        status: 200,
        headers: { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' },
      });
    } catch (error) {
      if (error instanceof HttpError) return errorResponse(error.status, error.code, error.message);
      return errorResponse(500, 'SERVER_INTERNAL', 'The chat request failed.', true);
    }
  };
}
