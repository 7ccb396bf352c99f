// createChatConnection: the live connection to one chat session's durable stream, for browsers,
// Node and workerd. Every rule (who shares the read, where it resumes, what is delivered, how
// long to wait before reading again, whether the read goes by WebSocket) is decided in Rust
// (`ChatConnectionCore`, see src/core/connection/machine.rs); this file performs what it
// decides: fetches, sockets, timers, and one queue per logical reader.
//
// A socket read carries the SSE read's events as WebSocket text messages (a Cloudflare stream
// object hibernates with its sockets open: an idle page costs it nothing), so the machine reads
// both alike: an open socket is a 200 event stream, a message is body bytes, a close is the end.
import { ChatConnectionCore, createTurnSnapshotCursor } from '../../pkg-client/turnkeep.js';

/** The error a reader, `send` or `stopTurn` rejects with: a versioned diagnostic. */
export class ChatConnectionError extends Error {
  constructor(diagnostic) {
    super(diagnostic.message);
    this.name = 'ChatConnectionError';
    this.code = diagnostic.code;
    this.retryable = diagnostic.retryable;
    if (diagnostic.status !== undefined) this.status = diagnostic.status;
    this.diagnostic = diagnostic;
  }
}

/**
 * The streams auth provider a connection uses when given none: the target's own `headers`
 * (HeadersInit, or a function returning it), for every read and post. A connection that runs on
 * a server on behalf of someone passes `auth` (e.g. the streams token) instead.
 */
export const defaultStreamsAuth = (target) => async () =>
  new Headers((typeof target?.headers === 'function' ? await target.headers() : target?.headers) ?? {});

/**
 * `createChatConnection({ target, seed?, initialMessages?, initialOffset?, initialRunId?,
 * definitionRevision?, authorize?, auth?, fetch?, webSocket? })`.
 * `target`: the session stream's URL (a Durable Streams SSE endpoint, e.g. a chat-stream proxy
 * route), `{ url, chatUrl?, sessionId?, headers? }` (`chatUrl` and `sessionId` let it send
 * turns; `headers`: HeadersInit, or a function returning it, sent with every request), or the
 * seed's `{ sessionId, baseUrl?, headers? }` (the session's routes under `baseUrl`; `authorize`
 * required). `authorize(request, sessionId)`: asked before every request the connection makes;
 * a falsy answer sends nothing (reads end `STREAM_REFUSED` 403, posts reject `SESSION_FORBIDDEN`).
 * `auth()`: the headers of every request (default `defaultStreamsAuth(target)`).
 * `seed` (`resolveChatSnapshot`'s answer) and `definitionRevision`: a seed or chunk of another
 * session or revision is refused (`RENDER_FOREIGN_SESSION`, `RENDER_REVISION_MISMATCH`).
 * `webSocket`: read live over a WebSocket instead of SSE — `true` (the global `WebSocket`: a
 * browser sends no custom headers on it, only cookies) or `(url, headers) => WebSocket` (e.g.
 * Node's `ws` with the `auth` headers). A socket that fails to open makes the connection read
 * SSE from then on.
 */
export function createChatConnection(options) {
  const base = globalThis.location?.href;
  const core = new ChatConnectionCore(options, base, seed());
  const target = options.target;
  const fetchImpl = options.fetch ?? ((request) => globalThis.fetch(request));
  const openSocket =
    typeof options.webSocket === 'function' ? options.webSocket : (url) => new globalThis.WebSocket(url);
  if (typeof fetchImpl !== 'function') throw new TypeError('createChatConnection: fetch must be a function');
  const auth = options.auth ?? defaultStreamsAuth(target);
  if (typeof auth !== 'function') throw new TypeError('createChatConnection: auth must be a function returning headers');
  const headersOf = async () => new Headers((await auth()) ?? {});
  const authorize = typeof options.authorize === 'function' ? options.authorize : null;
  /** Whether `authorize` lets `request` go out (no hook: yes). */
  const allowed = async (request) => !authorize || Boolean(await authorize(request, core.sessionId ?? undefined));

  const readers = new Map(); // reader id → its queue
  const sends = new Set(); // AbortControllers of posts in flight
  let read = null; // { generation, controller }: the one physical read
  let timer = null; // { generation, handle }

  function perform(actions) {
    for (const action of actions) {
      switch (action.type) {
        case 'connect':
          if (action.socketUrl) startSocket(action.generation, action.socketUrl, action.url);
          else startRead(action.generation, action.url);
          break;
        case 'abort':
          if (read?.generation === action.generation) {
            read.controller.abort();
            read = null;
          }
          if (timer?.generation === action.generation) {
            clearTimeout(timer.handle);
            timer = null;
          }
          break;
        case 'wait': {
          const { generation } = action;
          const handle = setTimeout(() => {
            if (timer?.generation === generation) timer = null;
            perform(core.timer(generation));
          }, action.delayMs);
          timer = { generation, handle };
          break;
        }
        case 'deliver':
          for (const id of action.readers) readers.get(id)?.push(action.chunks);
          break;
        case 'end':
          for (const id of action.readers) {
            readers.get(id)?.end(action.error);
            readers.delete(id);
          }
          break;
      }
    }
  }

  async function startRead(generation, url) {
    const controller = new AbortController();
    read = { generation, controller };
    const current = () => read?.generation === generation;
    const ended = () => {
      if (!current()) return;
      read = null;
      perform(core.ended(generation, Date.now()));
    };
    let response;
    try {
      const request = new Request(url, { headers: await headersOf(), signal: controller.signal });
      if (!(await allowed(request))) {
        // Refused before anything was sent: the readers end as on a 403 from the server.
        if (current()) perform(core.response(generation, 403, null, Date.now()));
        return;
      }
      response = await fetchImpl(request);
    } catch {
      return ended();
    }
    if (!current()) return void response.body?.cancel().catch(() => {});
    perform(core.response(generation, response.status, response.headers.get('content-type'), Date.now()));
    if (!current() || !response.body) return void response.body?.cancel().catch(() => {});
    const body = response.body.getReader();
    controller.signal.addEventListener('abort', () => body.cancel().catch(() => {}), { once: true });
    try {
      for (;;) {
        const { value, done } = await body.read();
        if (done || !current()) break;
        perform(core.body(generation, value));
      }
    } catch {
      // The connection broke; `ended` below reports it (unless an action aborted it).
    }
    ended();
  }

  /** A socket read: the events of the SSE read at `url`, over a WebSocket to `socketUrl`. */
  async function startSocket(generation, socketUrl, url) {
    const controller = new AbortController();
    read = { generation, controller };
    const current = () => read?.generation === generation;
    let socket;
    try {
      const headers = await headersOf();
      // What `authorize` is asked about: the read this socket carries.
      if (!(await allowed(new Request(url, { headers })))) {
        if (current()) perform(core.response(generation, 403, null, Date.now()));
        return;
      }
      if (!current()) return;
      socket = openSocket(socketUrl, headers);
      socket.binaryType = 'arraybuffer';
    } catch {
      if (current()) perform(core.socketFailed(generation));
      return;
    }
    let opened = false;
    const encoder = new TextEncoder();
    controller.signal.addEventListener('abort', () => socket.close(1000), { once: true });
    socket.addEventListener('error', () => {}); // a close follows, which decides (and Node's `ws` throws an unheard error)
    socket.addEventListener('open', () => {
      if (!current()) return void socket.close(1000);
      opened = true;
      perform(core.response(generation, 200, 'text/event-stream', Date.now()));
    });
    socket.addEventListener('message', (event) => {
      if (!current()) return;
      const bytes = typeof event.data === 'string' ? encoder.encode(event.data) : new Uint8Array(event.data);
      perform(core.body(generation, bytes));
    });
    socket.addEventListener('close', () => {
      if (!current()) return;
      if (!opened) return void perform(core.socketFailed(generation));
      read = null;
      perform(core.ended(generation, Date.now()));
    });
  }

  function cancel(id) {
    perform(core.cancel(id));
  }

  function subscribe(signal) {
    const { reader: id, actions } = core.subscribe();
    const queue = readerQueue(() => cancel(id), (count) => core.took(id, count));
    readers.set(id, queue);
    perform(actions);
    if (signal) {
      if (signal.aborted) queue.onAbort();
      else signal.addEventListener('abort', queue.onAbort, { once: true });
    }
    return queue.iterable;
  }

  /** POSTs `body` to the chat endpoint; a refusal rejects with its versioned diagnostic. */
  async function post(body, signal) {
    const controller = new AbortController();
    const unlink = link(signal, controller);
    sends.add(controller);
    try {
      const headers = await headersOf();
      headers.set('content-type', 'application/json');
      const request = new Request(core.chatUrl, { method: 'POST', headers, body, signal: controller.signal });
      if (!(await allowed(request))) throw new ChatConnectionError(core.forbidden());
      const response = await fetchImpl(request);
      if (!response.ok) {
        const text = await response.text().catch(() => '');
        throw new ChatConnectionError(core.postFailure(response.status, text));
      }
      return { response, done: () => (sends.delete(controller), unlink()) };
    } catch (error) {
      sends.delete(controller);
      unlink();
      throw error;
    }
  }

  async function send(messages, { signal, turnId = `turn-${crypto.randomUUID()}`, onSnapshot } = {}) {
    const body = core.submitBody(messages, turnId, `evt-${crypto.randomUUID()}`, Date.now());
    const { response, done } = await post(body, signal);
    perform(core.nudge()); // the stream exists now: a reader waiting for it reads at once
    try {
      // The turn's own answer: full snapshots, read through the one snapshot cursor.
      const cursor = createTurnSnapshotCursor(core.sessionId);
      let snapshot;
      for await (const line of ndjsonLines(response.body)) {
        if (cursor.apply(line)) {
          snapshot = cursor.getSnapshot();
          onSnapshot?.(snapshot);
        }
      }
      return { turnId, snapshot };
    } finally {
      done();
    }
  }

  async function stopTurn(turnId, { signal } = {}) {
    const body = core.stopBody(turnId, `evt-${crypto.randomUUID()}`, Date.now());
    const { response, done } = await post(body, signal);
    try {
      return (await response.json()).stop;
    } finally {
      done();
    }
  }

  /**
   * The adapters over this connection (toTanStackConnection, TurnkeepChatTransport) post their
   * own bodies; each asks the connection's `authorize` first, as every request it sends does.
   */
  async function authorizeRequest(request) {
    if (!(await allowed(request))) throw new ChatConnectionError(core.forbidden());
  }

  function dispose() {
    perform(core.dispose());
    for (const controller of sends) controller.abort();
    sends.clear();
  }

  return {
    subscribe,
    send,
    stopTurn,
    authorizeRequest,
    /** A turn was accepted elsewhere (another route, another wire): a reader waiting for the
     * stream to exist reads at once. */
    nudge: () => perform(core.nudge()),
    /** The versioned diagnostic of a refused request to a turnkeep route, as the error to throw. */
    failure: (status, text) => new ChatConnectionError(core.postFailure(status, text)),
    /** The replay state (initial messages and every chunk delivered, projected) and the cursor. */
    snapshot: () => core.snapshot(),
    get offset() {
      return core.offset;
    },
    close: dispose,
    stop: dispose,
    dispose,
  };
}

/** One logical reader: its queue of delivered chunks, read by `for await`. */
function readerQueue(cancel, took) {
  const chunks = [];
  let head = 0;
  let ended = false;
  let error;
  let waiting = []; // resolvers of next() calls waiting for a chunk (several may wait at once)
  const notify = () => {
    const wake = waiting;
    waiting = [];
    for (const resolve of wake) resolve();
  };
  const iterator = {
    async next() {
      for (;;) {
        if (head < chunks.length) {
          const value = chunks[head];
          chunks[head++] = undefined;
          if (head > 1024 && head * 2 > chunks.length) {
            chunks.splice(0, head);
            head = 0;
          }
          took(1);
          return { value, done: false };
        }
        if (ended) {
          if (error) {
            const thrown = error;
            error = undefined;
            throw new ChatConnectionError(thrown);
          }
          return { value: undefined, done: true };
        }
        await new Promise((resolve) => waiting.push(resolve));
      }
    },
    async return() {
      if (!ended) cancel();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return {
    iterable: iterator,
    push(items) {
      for (const item of items) chunks.push(item);
      notify();
    },
    end(diagnostic) {
      ended = true;
      error = diagnostic;
      notify();
    },
    onAbort: () => {
      if (!ended) cancel();
    },
  };
}

/** Aborts `controller` when `signal` does; returns the function that unlinks them. */
function link(signal, controller) {
  if (!signal) return () => {};
  if (signal.aborted) {
    controller.abort(signal.reason);
    return () => {};
  }
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/** The lines of an NDJSON body, as text (the cursor decodes them). */
async function* ndjsonLines(body) {
  if (!body) return;
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.trim() !== '') yield line;
      }
    }
    if (buffer.trim() !== '') yield buffer;
  } finally {
    reader.releaseLock();
  }
}

/** A seed for the retry jitter (53 random bits). */
function seed() {
  const [high, low] = crypto.getRandomValues(new Uint32Array(2));
  return (high & 0x1fffff) * 2 ** 32 + low;
}
