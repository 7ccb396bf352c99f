// The durable session stream (design §5): a Durable Streams protocol server, one `SessionStream`
// Durable Object (SQLite-backed) per stream, reached through the Worker at `/v1/stream/<name>`.
//
// Every protocol decision is made in Rust (`SessionStreamCore`, src/cloudflare/streams/); this
// shell owns only what needs the event loop:
// - long-poll waiters and open SSE responses, which live in the object instance and are woken
//   when an append (or close, or delete) commits there;
// - calls to other streams' objects, for forks (see src/cloudflare/streams/fork.rs);
// - the Worker-side route: auth, the body-size precheck, browser security headers, CORS.
// Browsers read a chat session's stream through the chat-stream proxy (worker.mjs mounts
// createChatStreamProxy), which calls `routeStreams` with the server-side token.
//
// Writes are durable before they are acknowledged: each mutation runs as one synchronous
// `transactionSync` on `ctx.storage.sql`, and the runtime's output gate holds the response until
// that write is confirmed.
//
// Env: STREAMS_PUBLIC=1 (no token needed: local tests and conformance runs only), STREAMS_TOKEN
// (the server-side bearer token), STREAMS_LONG_POLL_MS (default 20000; the tests use 3000),
// STREAMS_SSE_MS (how long an SSE response stays open; default and maximum 60000).
import { DurableObject } from 'cloudflare:workers';
import '../workerd.mjs'; // instantiates the wasm module (initSync) before any class is built
import { createDurableStreamsLog, SessionStreamCore, sessionStreamLimits } from '../../pkg/turnkeep.js';

const LIMITS = sessionStreamLimits();
const STREAM_PREFIX = '/v1/stream/';
const EMPTY = new Uint8Array(0);
const UTF8 = new TextEncoder();

/** Headers every stream response carries (browser security and CORS, protocol §11). */
const SECURITY_HEADERS = Object.freeze({
  'x-content-type-options': 'nosniff',
  'cross-origin-resource-policy': 'cross-origin',
  'access-control-allow-origin': '*',
  'access-control-expose-headers':
    'Stream-Next-Offset, Stream-Cursor, Stream-Up-To-Date, Stream-Closed, Stream-TTL, Stream-Expires-At, ' +
    'Stream-SSE-Data-Encoding, Producer-Epoch, Producer-Seq, Producer-Expected-Seq, Producer-Received-Seq, ' +
    'ETag, Content-Type, Location',
});
const PREFLIGHT_HEADERS = Object.freeze({
  'access-control-allow-methods': 'GET, POST, PUT, DELETE, HEAD, OPTIONS',
  'access-control-allow-headers':
    'Authorization, Content-Type, If-None-Match, Stream-Seq, Stream-TTL, Stream-Expires-At, Stream-Closed, ' +
    'Producer-Id, Producer-Epoch, Producer-Seq, Stream-Forked-From, Stream-Fork-Offset, Stream-Fork-Sub-Offset',
  'access-control-max-age': '86400',
});

/**
 * The Worker-side route. Returns a Response promise for `/v1/stream/*`, or null for any other
 * path. `url` is `request.url` parsed (the Worker has parsed it already; every append passes here).
 */
export function routeStreams(request, env, url = new URL(request.url)) {
  if (url.pathname.startsWith(STREAM_PREFIX)) return streamRoute(request, env, url);
  return null;
}

async function streamRoute(request, env, url) {
  if (request.method === 'OPTIONS') return secured(new Response(null, { status: 204, headers: PREFLIGHT_HEADERS }));
  if (!authorized(request, env)) {
    return secured(diagnostic(401, 'streams.v1.unauthorized', 'send Authorization: Bearer <streams token>', {
      'www-authenticate': 'Bearer realm="turnkeep streams"',
    }));
  }
  const name = streamName(url.pathname.slice(STREAM_PREFIX.length));
  if (name === null) return secured(diagnostic(400, 'streams.v1.name_invalid', 'the stream name is empty, too long or badly encoded'));
  const length = Number(request.headers.get('content-length') ?? 0);
  if (length > LIMITS.appendBytesMax) {
    return appendTooLarge();
  }
  if (!env.SESSION_STREAM) return secured(diagnostic(500, 'streams.v1.not_configured', 'the SESSION_STREAM binding is missing'));
  try {
    // The object answers with the security headers already set (one Response copy less).
    return await streamStub(env, name).fetch(request);
  } catch (error) {
    console.error('session stream request failed:', error);
    return secured(diagnostic(500, 'streams.v1.internal', 'the stream could not be served'));
  }
}

/** The stream name of a chat session (design §8): `chat/<tenant>/<sessionId>`. */
export function chatStreamName(tenant, sessionId) {
  return `chat/${tenant}/${sessionId}`;
}

/** The path of a chat session's stream under this Worker (what the chat-stream proxy reads). */
export function chatStreamPath(tenant, sessionId) {
  return `${STREAM_PREFIX}${chatStreamName(tenant, sessionId)}`;
}

/**
 * The session log of a chat session: its `SessionStream` object through the stub's `fetch` (the
 * Durable Streams protocol, with no hop through the Worker and no token: the route's auth guards
 * only requests from outside).
 */
export function sessionStreamLog(env, tenant, sessionId) {
  const name = chatStreamName(tenant, sessionId);
  const stub = streamStub(env, name);
  return createDurableStreamsLog({
    url: `https://session-stream.internal${STREAM_PREFIX}${name}`,
    fetch: (request) => stub.fetch(request),
  });
}

function isPublic(env) {
  return env.STREAMS_PUBLIC === '1' || env.STREAMS_PUBLIC === 1 || env.STREAMS_PUBLIC === true;
}

function authorized(request, env) {
  if (isPublic(env)) return true;
  const token = env.STREAMS_TOKEN;
  if (typeof token !== 'string' || token === '') return false;
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '');
  return match !== null && sameText(match[1], token);
}

/** Comparison whose time does not depend on where the texts differ. */
function sameText(a, b) {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

function streamName(raw) {
  const name = safeDecode(raw);
  if (!name || UTF8.encode(name).length > LIMITS.streamNameBytesMax) return null;
  return /[\u0000-\u001f\u007f]/.test(name) ? null : name;
}

function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

function streamStub(env, name) {
  return env.SESSION_STREAM.get(env.SESSION_STREAM.idFromName(name));
}

/** Adds the security headers (a copy: responses from a stub have immutable headers). */
function secured(response) {
  const out = new Response(response.body, response);
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) out.headers.set(name, value);
  return out;
}

/** 413: checked at the route from Content-Length, and again in the object as the body is read. */
function appendTooLarge() {
  return secured(diagnostic(413, 'streams.v1.append_too_large', `an append may carry at most ${LIMITS.appendBytesMax} bytes`));
}

function diagnostic(status, code, message, extra = {}) {
  return new Response(JSON.stringify({ error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json', ...extra },
  });
}

/** The Durable Object: one per stream. */
export class SessionStream extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.core = new SessionStreamCore(ctx.storage);
    /** Long-poll and SSE waiters, woken when this stream changes. */
    this.waiters = new Set();
    /** PUT and DELETE run one at a time (a fork PUT awaits other objects midway). */
    this.exclusive = Promise.resolve();
    this.longPollMs = configuredMs(env.STREAMS_LONG_POLL_MS, LIMITS.longPollMsDefault, LIMITS.longPollMsMax);
    this.sseMs = configuredMs(env.STREAMS_SSE_MS, LIMITS.sseConnectionMsMax, LIMITS.sseConnectionMsMax);
  }

  async fetch(request) {
    const method = request.method;
    try {
      if (method === 'PUT' || method === 'DELETE') return await this.serially(() => this.mutate(request));
      if (method === 'POST') return await this.mutate(request);
      return await this.read(request);
    } catch (error) {
      console.error('SessionStream failed:', error);
      this.core = new SessionStreamCore(this.ctx.storage); // drop cached state; storage is the truth
      return secured(diagnostic(500, 'streams.v1.internal', 'the stream could not be served'));
    }
  }

  async mutate(request) {
    const body = await readBody(request);
    if (body === null) {
      return appendTooLarge();
    }
    const decide = () =>
      this.transaction(() => this.core.handle(request.method, request.url, request.headers, body, Date.now(), jitter(), false));
    let reply = decide();
    if (reply.needSource !== undefined) return this.createFork(request, body, reply.needSource);
    // A producer append ahead of its predecessors: retry as appends commit, briefly.
    const gapDeadline = Date.now() + LIMITS.producerGapWaitMs;
    while (reply.gap && Date.now() < gapDeadline) {
      if (!(await this.changed(gapDeadline - Date.now(), request.signal))) break;
      reply = decide();
    }
    return this.answer(reply);
  }

  async read(request) {
    const deadline = Date.now() + this.longPollMs;
    let url = request.url;
    for (;;) {
      const waited = Date.now() >= deadline;
      // A read writes too, at times: a sliding TTL renews, an expired stream is purged.
      const reply = this.transaction(() =>
        this.core.handle(request.method, url, request.headers, EMPTY, Date.now(), jitter(), waited),
      );
      if (reply.sseOffset !== undefined) return this.sse(request, reply);
      if (reply.wait === undefined) return this.answer(reply);
      url = withOffset(url, reply.wait); // `offset=now` waits for data after the tail it saw
      await this.changed(deadline - Date.now(), request.signal);
    }
  }

  /** Finishes a reply: releases a freed source reference, wakes waiters, builds the Response. */
  async answer(reply) {
    if (reply.wake) this.wake();
    if (reply.releaseSource !== undefined) await releaseChain(this.env, reply.releaseSource);
    return toResponse(reply);
  }

  /** A fork PUT: take a reference at the source, decide, copy the inherited rows, commit. */
  async createFork(request, body, sourceName) {
    const source = streamStub(this.env, sourceName);
    const info = await source.forkAcquire(Date.now());
    if (info.releaseSource !== undefined) await releaseChain(this.env, info.releaseSource);
    const step = (subRow, commit) =>
      this.transaction(() => this.core.putFork(request.url, request.headers, body, info, subRow, commit, Date.now()));
    try {
      const plan = step(null, false);
      if (plan.status !== 0) return this.answer(plan);
      for (let from = 0; from < plan.copyUpto; ) {
        const rows = await source.exportRows(from, plan.copyUpto);
        if (rows.length === 0) break;
        this.transaction(() => this.core.importRows(rows));
        from = rows[rows.length - 1].end;
      }
      const subRow = plan.copySubRow ? await source.rowStartingAt(plan.copyUpto) : null;
      return this.answer(step(subRow, true));
    } catch (error) {
      if (info.state === 'live') await releaseChain(this.env, sourceName);
      throw error;
    }
  }

  /** An SSE response: catch-up events, then live ones as appends commit, closed after ~60 s. */
  sse(request, reply) {
    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    const cursor = new URL(request.url).searchParams.get('cursor');
    // Closed by us after STREAMS_SSE_MS (default and maximum 60 s); clients reconnect from the
    // offset of the last control event.
    const endAt = Date.now() + this.sseMs;
    const pump = async () => {
      let offset = reply.sseOffset;
      let controlIfEmpty = true; // the first chunk always tells the reader where it stands
      while (!request.signal?.aborted) {
        const chunk = this.transaction(() => this.core.sseChunk(offset, cursor, Date.now(), jitter(), controlIfEmpty));
        if (chunk.releaseSource !== undefined) await releaseChain(this.env, chunk.releaseSource);
        if (chunk.text && !(await writeUntil(writer, UTF8.encode(chunk.text), endAt))) return false;
        if (chunk.offset !== undefined) offset = chunk.offset;
        const left = endAt - Date.now();
        if (chunk.done || left <= 0) break;
        // A quiet wait ends with a keep-alive control event (fresh cursor, still up to date).
        controlIfEmpty = !(await this.changed(Math.min(this.longPollMs, left), request.signal));
      }
      return true;
    };
    pump()
      .catch(() => false) // the reader went away
      .then((finished) => (finished ? writer.close() : writer.abort()))
      .catch(() => {});
    return toResponse({ ...reply, body: undefined }, readable);
  }

  /** Resolves true when the stream changes, false after `ms` or when `signal` aborts. */
  changed(ms, signal) {
    return new Promise((resolve) => {
      const waiter = { resolve: () => finish(true) };
      const timer = setTimeout(() => finish(false), Math.max(0, ms));
      const onAbort = () => finish(false);
      const finish = (value) => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        signal?.removeEventListener?.('abort', onAbort);
        resolve(value);
      };
      signal?.addEventListener?.('abort', onAbort);
      this.waiters.add(waiter);
    });
  }

  wake() {
    for (const waiter of [...this.waiters]) waiter.resolve();
  }

  serially(task) {
    const run = this.exclusive.then(task, task);
    this.exclusive = run.catch(() => {});
    return run;
  }

  /** Runs `fn` as one SQLite transaction: a throw rolls every write of it back. */
  transaction(fn) {
    return this.ctx.storage.transactionSync(fn);
  }

  // ---- RPC from other SessionStream objects (forks; see src/cloudflare/streams/fork.rs).

  forkAcquire(nowMs) {
    return this.transaction(() => this.core.forkAcquire(nowMs));
  }

  forkRelease() {
    const next = this.transaction(() => this.core.forkRelease());
    this.wake();
    return next ?? null;
  }

  exportRows(from, upto) {
    return this.core.exportRows(from, upto);
  }

  rowStartingAt(start) {
    return this.core.rowStartingAt(start);
  }
}

/**
 * Releases one fork reference at `name`, and on up the chain while sources get purged. A failure
 * is logged, not thrown: the request that freed the reference has already committed, and a
 * reference left behind only keeps a deleted source reserved (410) longer.
 */
async function releaseChain(env, name) {
  try {
    for (let next = name; next; ) next = await streamStub(env, next).forkRelease();
  } catch (error) {
    console.error(`releasing a fork reference at ${name} failed:`, error);
  }
}

/** The body, or null when it exceeds the append limit (read no further than that). */
async function readBody(request) {
  if (!request.body) return EMPTY;
  const reader = request.body.getReader();
  const parts = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > LIMITS.appendBytesMax) {
      reader.cancel().catch(() => {});
      return null;
    }
    parts.push(value);
  }
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

function withOffset(url, offset) {
  const next = new URL(url);
  next.searchParams.set('offset', offset);
  return next.href;
}

function toResponse(reply, stream) {
  const headers = new Headers(SECURITY_HEADERS);
  const list = reply.headers;
  for (let i = 0; i + 1 < list.length; i += 2) headers.append(list[i], list[i + 1]);
  const nullBody = reply.status === 204 || reply.status === 304;
  return new Response(nullBody ? null : stream ?? reply.body ?? null, { status: reply.status, headers });
}

/** A duration from the environment: the default when unset or not a positive number, at most `max`. */
function configuredMs(value, fallback, max) {
  const ms = Number(value);
  if (value === undefined || value === '' || !Number.isFinite(ms) || ms <= 0) return fallback;
  return Math.min(ms, max);
}

/** Writes one chunk, giving up at `endAt` (a reader that stopped reading must not pin us). */
async function writeUntil(writer, bytes, endAt) {
  let timer;
  const expired = new Promise((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, endAt - Date.now()));
  });
  try {
    return await Promise.race([writer.write(bytes).then(() => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Seconds of jitter for a cursor the client already holds (protocol §10.1). */
function jitter() {
  return 1 + Math.floor(Math.random() * LIMITS.cursorJitterSecondsMax);
}
