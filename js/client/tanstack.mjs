// toTanStackConnection: TanStack AI's `SubscribeConnectionAdapter` (`useChat({ connection })` of
// @tanstack/ai-react / ai-preact / ai-solid, `new ChatClient({ connection })` of
// @tanstack/ai-client 0.33) over a page's one `createChatConnection` and a turnkeep chat route
// (`createUIMessageChatHandler`, which takes AG-UI `RunAgentInput` bodies). No rule lives here:
// the route decides the turn (thread id = session id, run id = turn id, `resume[]` entries as
// confirmation decisions), the log already holds AG-UI events (approval interrupts with
// `reason: "approval_required"`), the wasm decides what `hydrate` restores and what `joinRun`
// replays (`toTanStackHydration`, `TanStackRunJoin`), and the connection decides how the one SSE
// read is shared and where it resumes.
//
// - subscribe(signal): the connection's chunks from its offset (a seeded connection starts where
//   its seed ends: no history is replayed into TanStack's live subscription). A live subscription
//   (`useChat({ live: true })`) next to a hydrate or a join would apply twice what they restore:
//   when either takes the connection's snapshot, each live subscription is moved onto a fresh
//   reader taken with it (what the old reader still held is in the snapshot), and while a join
//   is open it leaves out what the join yields (a `TanStackRunJoin` of the same snapshot as its
//   reader says which: the join's rule, applied once more);
// - send(messages, data, signal, runContext): POSTs a RunAgentInput to `api` asking for JSON (the
//   route answers 202 instead of the run's events, which come over the connection); resolves once the
//   turn is admitted (202); its events arrive through subscribe;
// - joinRun(runId, signal): the running turn's answer so far rebuilt, then the log's chunks,
//   ending at the run's end;
// - hydrate(threadId): `{ messages, activeRun, interrupts }` from what the connection holds;
// - stop(): stops whatever turn runs in the thread, from any tab. TanStack's own `stop()` aborts
//   the same signal as leaving the page, so it cannot mean "stop the turn"; call both.
import { TanStackRunJoin, toTanStackHydration } from '../../pkg-client/turnkeep.js';
import { authorized } from './authorized.mjs';

/**
 * `toTanStackConnection(connection, { api, threadId?, headers?, credentials?, fetch? })`:
 * `connection` the page's `createChatConnection` of this thread's session, `api` the chat route
 * (`createUIMessageChatHandler` mounted there), `threadId` the session id (else the one TanStack
 * passes to `send` / `hydrate`), `headers` a HeadersInit or a function returning one.
 */
export function toTanStackConnection(connection, { api, threadId, headers, credentials, fetch } = {}) {
  if (!connection || typeof connection.subscribe !== 'function' || typeof connection.snapshot !== 'function') {
    throw new TypeError('toTanStackConnection: connection must be a createChatConnection');
  }
  if (typeof api !== 'string' || api === '') throw new TypeError('toTanStackConnection: api must be the chat route');
  const fetchImpl = fetch ?? ((...args) => globalThis.fetch(...args));
  let thread = threadId;

  async function request(url, init) {
    const merged = new Headers((typeof headers === 'function' ? await headers() : headers) ?? {});
    for (const [name, value] of new Headers(init.headers ?? {})) merged.set(name, value);
    await authorized(connection, url, { ...init, headers: merged });
    const response = await fetchImpl(url, { ...init, headers: merged, credentials });
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      throw connection.failure(response.status, text);
    }
    return response;
  }

  function threadOf(given) {
    const id = given ?? thread;
    if (typeof id !== 'string' || id === '') throw new TypeError('toTanStackConnection: no threadId (the session id)');
    thread = id;
    return id;
  }

  const lives = new Set(); // the live subscriptions
  const joins = new Set(); // the open joins: { runId }

  /**
   * A live subscription's read of the connection: its reader, and per open join a
   * `TanStackRunJoin` of the same snapshot as the reader (the chunks that join yields).
   */
  function liveRead(signal) {
    const read = { reader: undefined, claims: new Map() };
    read.rebase = (snapshot) => {
      const old = read.reader;
      read.reader = connection.subscribe(signal)[Symbol.asyncIterator]();
      read.claims = new Map();
      for (const join of joins) {
        const twin = new TanStackRunJoin(snapshot, threadOf(), join.runId, Date.now());
        twin.start();
        if (!twin.ended) read.claims.set(join, twin);
      }
      void old?.return?.();
    };
    read.rebase(joins.size > 0 ? connection.snapshot() : undefined);
    return read;
  }

  /** The connection's snapshot, each live subscription's reader taken with it. */
  function snapshotForRestore() {
    const snapshot = connection.snapshot();
    for (const read of lives) read.rebase(snapshot);
    return snapshot;
  }

  /** Whether an open join yields `chunk` (so the live subscription leaves it out). */
  function claimed(read, chunk) {
    let claim = false;
    for (const [join, twin] of read.claims) {
      if (twin.feed(chunk) !== undefined) claim = true;
      if (twin.ended) read.claims.delete(join);
    }
    return claim;
  }

  async function* live(signal) {
    const read = liveRead(signal);
    lives.add(read);
    try {
      for (;;) {
        const from = read.reader;
        const { value, done } = await from.next();
        if (from !== read.reader) continue; // rebased meanwhile: what the old reader read is in the snapshot
        if (done) return;
        if (!claimed(read, value)) yield value;
      }
    } finally {
      lives.delete(read);
      await read.reader.return?.();
    }
  }

  /** A join ended (its twins end at the same chunk) or was left (its twins are dropped). */
  function closeJoin(join, left) {
    joins.delete(join);
    if (left) for (const read of lives) read.claims.delete(join);
  }

  return {
    subscribe(signal) {
      return live(signal);
    },

    async send(messages, data, signal, runContext = {}) {
      const body = {
        threadId: threadOf(runContext.threadId),
        runId: runContext.runId ?? `run-${crypto.randomUUID()}`,
        ...(runContext.parentRunId ? { parentRunId: runContext.parentRunId } : {}),
        messages,
        tools: runContext.clientTools ?? [],
        context: [],
        state: {},
        forwardedProps: runContext.forwardedProps ?? data ?? {},
        ...(runContext.resume ? { resume: runContext.resume } : {}),
      };
      const response = await request(api, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(runContext.headers ?? {}) },
        body: JSON.stringify(body),
        signal,
      });
      await response.body?.cancel().catch(() => {});
      connection.nudge();
    },

    joinRun(runId, signal) {
      // The snapshot and the reader are taken together: the reader gets exactly what follows it.
      const open = { runId };
      joins.add(open);
      const join = new TanStackRunJoin(snapshotForRestore(), threadOf(), runId, Date.now());
      const replay = join.start();
      if (join.ended) {
        closeJoin(open, true);
        return fromArray(replay);
      }
      return followed(join, replay, connection.subscribe(signal), (left) => closeJoin(open, left));
    },

    async hydrate(threadId) {
      threadOf(threadId);
      return toTanStackHydration(snapshotForRestore());
    },

    /** Stops whatever turn runs in the thread: `{ version, state, turnId? }`. */
    async stop({ signal } = {}) {
      const url = new URL(api, globalThis.location?.href ?? 'http://localhost/');
      url.pathname = `${url.pathname.replace(/\/$/, '')}/${encodeURIComponent(threadOf())}/stop`;
      const target = api.startsWith('http') ? url.href : url.pathname + url.search;
      const response = await request(target, { method: 'POST', signal });
      return (await response.json()).stop;
    },
  };
}

async function* fromArray(chunks) {
  yield* chunks;
}

/**
 * The join's replay, then what it lets through of the reader's chunks; the reader is released,
 * and `closed(left)` told whether the join was left before the run's end.
 */
async function* followed(join, replay, reader, closed) {
  const chunks = reader[Symbol.asyncIterator]();
  try {
    yield* replay;
    for (;;) {
      const { value, done } = await chunks.next();
      if (done) return;
      const out = join.feed(value);
      if (out !== undefined) yield out;
      if (join.ended) return;
    }
  } finally {
    closed(!join.ended);
    await chunks.return?.();
  }
}
