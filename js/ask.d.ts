// Types of `turnkeep/ask`: the Ask service and its BM25 retriever. The shared types are
// `turnkeep`'s (index.d.ts).
import type { AuthenticateResult, DemoModel, HostModel, OpenAICompatibleModel, SafeId } from './index.js';

export { createDemoModel, createOpenAICompatibleModel, toNodeHandler } from './index.js';

// ---- Ask service (AgentsKit-compatible `agentskit.chat.ask` v1) ----

/** The trusted site policy (`agentskit.chat.backend-site` v1), resolved by the host. */
export interface AskSiteConfig {
  protocol: 'agentskit.chat.backend-site';
  version: 1;
  siteId: SafeId;
  assistant: { id: SafeId; name: string; suggestions: string[] };
  corpus: { id: SafeId; mode: 'local' | 'federated' };
  components: SafeId[];
  actions: SafeId[];
  limits: { requestTimeoutMs: number; retrievalTimeoutMs: number; generationTimeoutMs: number; maxSources: number };
  persistence: { mode: 'required' | 'disabled' };
  /**
   * turnkeep addition: the only absolute origins (`https://docs.example.com`) a citation may
   * link to; site-relative links (`/docs/...`) are always allowed. Absent: any safe http(s) link.
   */
  citations?: { origins: string[] };
}

export interface AskMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** A citable source: `href` is a site-relative path or an http(s) URL. */
export interface AskSource {
  id: SafeId;
  title: string;
  href: string;
  excerpt: string;
}

export interface AskRetrieverInput {
  query: string;
  messages: AskMessage[];
  site: AskSiteConfig;
  signal: AbortSignal;
}

export interface AskRetriever {
  retrieve(input: AskRetrieverInput): readonly AskSource[] | Promise<readonly AskSource[]>;
}

export interface AskUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  costUsd?: number;
  model?: string;
}

export type AskGenerationChunk = { type: 'text'; delta: string } | { type: 'usage'; usage: AskUsage };

export interface AskGeneratorInput extends AskRetrieverInput {
  sources: AskSource[];
}

/** AgentsKit's generator shape. A chat model (`createDemoModel()`, ...) is accepted too. */
export interface AskGenerator {
  generate(input: AskGeneratorInput): AsyncIterable<AskGenerationChunk> | Iterable<AskGenerationChunk>;
}

export interface AskSessionKey {
  siteId: SafeId;
  subjectId: string;
  sessionId: SafeId;
}

export interface AskSessionRecord {
  revision: number;
  messages: AskMessage[];
}

/** CAS by revision: `save` writes only when the stored revision equals `expectedRevision` (0: none). */
export interface AskSessionStore {
  load(key: AskSessionKey, signal: AbortSignal): AskSessionRecord | undefined | Promise<AskSessionRecord | undefined>;
  save(key: AskSessionKey, record: AskSessionRecord, expectedRevision: number, signal: AbortSignal): boolean | Promise<boolean>;
}

export interface AskRateLimitDecision {
  allowed: boolean;
  retryAfterSeconds?: number;
}

export interface AskMetric {
  protocol: 'agentskit.chat.backend-metric';
  version: 1;
  name: string;
  siteId: SafeId;
  corpusId: SafeId;
  requestId: SafeId;
  value: number;
  unit: 'ms' | 'bytes' | 'count' | 'tokens' | 'usd';
  outcome: 'ok' | 'rejected' | 'cancelled' | 'error';
  emittedAt: string;
}

export interface AskServiceHandlerOptions<Context = unknown> {
  /** Runs before the body is read; `{ ok: false, response }` is returned verbatim. */
  authenticate(request: Request, signal: AbortSignal): AuthenticateResult<Context> | Promise<AuthenticateResult<Context>>;
  resolveSite(context: Context, signal: AbortSignal): AskSiteConfig | Promise<AskSiteConfig>;
  /** `^[A-Za-z0-9][A-Za-z0-9._:@-]{0,255}$` */
  resolveSubjectId(context: Context): string | Promise<string>;
  retrievers: { local?: AskRetriever; federated?: AskRetriever };
  generator: AskGenerator | DemoModel | OpenAICompatibleModel | HostModel;
  sessionStore?: AskSessionStore;
  rateLimit?(input: { context: Context; site: AskSiteConfig; subjectId: string; signal: AbortSignal }): AskRateLimitDecision | Promise<AskRateLimitDecision>;
  onMetric?(metric: AskMetric): void | Promise<void>;
  /** turnkeep addition: the cause of a failure (for logs; never sent to the client). */
  onError?(report: { code: string; requestId: string; cause: string }): void;
  /** Request body limit, default 65536. */
  maxBodyBytes?: number;
  /** Deadline of authentication and site resolution, default 30000. */
  bootstrapTimeoutMs?: number;
  createId?(): string;
  now?(): Date;
  /** Milliseconds for durations (metrics), default `Date.now`. */
  clock?(): number;
}

/** Throws an Error with `code: 'ASK_INTERNAL'` for bad options. */
export function createAskServiceHandler<Context = unknown>(options: AskServiceHandlerOptions<Context>): (request: Request) => Promise<Response>;

/** The built-in BM25 retriever over one corpus (Rust). */
export class LocalRetriever implements AskRetriever {
  private constructor();
  retrieve(input: { query: string; site: AskSiteConfig }): AskSource[];
  readonly corpusId: string;
  readonly size: number;
  free(): void;
}

/** Throws an Error with `code: 'ASK_INTERNAL'` for a bad corpus. */
export function createLocalRetriever(options: {
  corpusId: SafeId;
  documents: readonly { id: SafeId; title: string; url: string; text: string }[];
}): LocalRetriever;
