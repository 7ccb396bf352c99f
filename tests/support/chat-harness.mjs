// Test harness for createChatHandler, shared by the Node tests, the headless-Chromium tests and
// the benchmark. Plain ESM over Web globals only (Request, Response, ReadableStream,
// AbortController, TextEncoder/TextDecoder, setTimeout), so the same file runs in a page.
//
// Every function takes the package namespace (`pkg`: what js/node.mjs or js/browser.mjs
// exports) instead of importing it, so the caller decides which entry point is under test.

export const SUBMIT = 'client.turn.submit';
export const SNAPSHOT = 'server.turn.snapshot';
export const DIAGNOSTIC = 'server.turn.diagnostic';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A `client.turn.submit` event; `extra` is merged into the envelope (e.g. a stray `context`). */
export function submitEvent({ sessionId = 's1', turnId = 't1', input = 'hello', extra = {} } = {}) {
  return {
    protocol: 'agentskit.chat.turn',
    version: 1,
    eventId: `e-${turnId}`,
    sessionId,
    turnId,
    sequence: 0,
    emittedAt: '2026-07-11T03:00:00.000Z',
    event: SUBMIT,
    payload: { input },
    ...extra,
  };
}

/** A POST of `body` (an event object, text, or a ReadableStream) to the handler. */
export function chatRequest(body, { method = 'POST', headers = {}, signal } = {}) {
  // A header given as null is left out (e.g. no content-type at all).
  const merged = Object.entries({ 'content-type': 'application/json', ...headers }).filter(([, v]) => v !== null);
  const init = { method, headers: merged, signal };
  if (body instanceof ReadableStream) {
    init.body = body;
    init.duplex = 'half';
  } else if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  return new Request(new URL('/api/chat', baseUrl()), init);
}

function baseUrl() {
  return globalThis.location?.origin ?? 'http://127.0.0.1';
}

/**
 * A request body that records what the handler did with it: `pulls` counts reads (the stream
 * has highWaterMark 0, so nothing is pulled ahead of a reader) and `cancelled` says whether the
 * reader gave up. `chunks` is a list of strings, or `Infinity` chunks of `fill` when endless.
 */
export function recordingBody(chunks, { fill = 'x'.repeat(1024) } = {}) {
  const encoder = new TextEncoder();
  const record = { pulls: 0, cancelled: false, stream: null };
  let i = 0;
  record.stream = new ReadableStream(
    {
      pull(controller) {
        record.pulls += 1;
        if (chunks === Infinity) {
          controller.enqueue(encoder.encode(fill));
        } else if (i < chunks.length) {
          controller.enqueue(encoder.encode(chunks[i++]));
        } else {
          controller.close();
        }
      },
      cancel() {
        record.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return record;
}

/**
 * Session storage that wraps a CAS store, counts saves and lets a test wait for the save that
 * released a given turn (the one whose snapshot lists it in `terminalTurns` with no
 * `activeTurn`). `delayLoads` defers each load by a macrotask so concurrent requests interleave.
 */
export function countingStorage(pkg, { delayLoads = false } = {}) {
  const inner = pkg.createMemorySessionStorage();
  const waiters = [];
  const storage = {
    saves: [],
    async load(sessionId) {
      if (delayLoads) await sleep(0);
      return inner.load(sessionId);
    },
    async save(snapshot, expectedCursor) {
      const ok = await inner.save(snapshot, expectedCursor);
      storage.saves.push({ snapshot, expectedCursor, ok });
      for (const w of [...waiters]) {
        if (ok && w.matches(snapshot)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(snapshot);
        }
      }
      return ok;
    },
    /** Resolves with the snapshot of the save that released `turnId`. */
    released(turnId) {
      const matches = (s) => !s.activeTurn && (s.terminalTurns ?? []).some((t) => t.turnId === turnId);
      const done = storage.saves.find((s) => s.ok && matches(s.snapshot));
      if (done) return Promise.resolve(done.snapshot);
      return new Promise((resolve) => waiters.push({ matches, resolve }));
    },
    /** The writes of one turn: those holding its lease, and the one that released it. */
    savesOf(turnId) {
      return storage.saves.filter(
        (s) => s.snapshot.activeTurn?.turnId === turnId || (!s.snapshot.activeTurn && s.snapshot.terminalTurns?.at(-1)?.turnId === turnId),
      );
    },
    stored: (sessionId) => inner.load(sessionId),
  };
  return storage;
}

/** Chat memory in plain JS: keeps what was saved, counts calls, can be told to fail saving. */
/**
 * A ChatMemory that records its saves. `failSave: true` fails every save (a turn is then refused
 * before it runs: its user message cannot be kept); `failSave: 'closing'` keeps the first save (the
 * user's message, before the answer starts) and fails the later ones (the turn's closing save).
 */
export function recordingMemory({ failSave = false } = {}) {
  const memory = {
    messages: [],
    saves: 0,
    loads: 0,
    async load() {
      memory.loads += 1;
      return memory.messages;
    },
    async save(messages) {
      memory.saves += 1;
      if (failSave === true || (failSave === 'closing' && memory.saves > 1)) throw new Error('the memory store is down');
      memory.messages = structuredClone(messages);
    },
  };
  return memory;
}

/** The demo tools (`core::chat::demo`) defined in JS; `calls` records every execute. */
export function demoTools() {
  const calls = [];
  return {
    calls,
    tools: [
      {
        name: 'lookup',
        description: 'Looks a query up.',
        parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
        async execute(args, { signal }) {
          calls.push({ name: 'lookup', args, hasSignal: signal instanceof AbortSignal });
          return `result for ${args.query}`;
        },
      },
      {
        name: 'transfer',
        description: 'Moves money; needs a person to approve.',
        parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
        requiresConfirmation: true,
        async execute(args) {
          calls.push({ name: 'transfer', args });
          return `transferred ${args.amount}`;
        },
      },
    ],
  };
}

/**
 * A handler over the demo model with counting storage and recording memory.
 * `options` go to createChatHandler; `chat` to defineChat.
 */
export function demoSetup(pkg, { chunkDelayMs = 0, options = {}, chat = {}, memory, storage } = {}) {
  const store = storage ?? countingStorage(pkg);
  const mem = memory ?? recordingMemory();
  const { tools, calls } = demoTools();
  const definition = pkg.defineChat({
    id: 'demo',
    revision: 1,
    model: pkg.createDemoModel({ chunkDelayMs }),
    memory: mem,
    tools,
    ...chat,
  });
  const handler = pkg.createChatHandler({
    resolveDefinition: () => definition,
    sessionStorage: () => store,
    ...options,
  });
  return { handler, storage: store, memory: mem, toolCalls: calls, definition };
}

/**
 * Reads an NDJSON response body to its end (or until `stopAfter` lines, then cancels), waiting
 * `delayMs` before each read (a slow reader). Checks framing on every line: compact JSON, a
 * trailing "\n", decodable by `pkg.decodeTurnEvent`. Framing faults are collected, not thrown,
 * so a page can report them.
 */
export async function readTurn(pkg, response, { delayMs = 0, stopAfter = Infinity, onLine } = {}) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let cancelled = false;
  const events = [];
  const faults = [];
  let consumed = 0;
  for (;;) {
    if (delayMs > 0) await sleep(delayMs);
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = text.indexOf('\n', consumed)) !== -1) {
      const line = text.slice(consumed, nl);
      consumed = nl + 1;
      const event = checkLine(pkg, line, faults);
      if (event) events.push(event);
      if (onLine) await onLine(event, events.length);
    }
    if (events.length >= stopAfter) {
      await reader.cancel('the test stopped reading');
      cancelled = true;
      break;
    }
  }
  text += decoder.decode();
  if (!cancelled && !text.endsWith('\n')) faults.push('the body does not end with "\\n"');
  if (consumed < text.length) faults.push(`trailing bytes without "\\n": ${JSON.stringify(text.slice(consumed, consumed + 80))}`);
  const snapshots = events.filter((e) => e.event === SNAPSHOT);
  const diagnostics = events.filter((e) => e.event === DIAGNOSTIC);
  return { text, events, snapshots, diagnostics, last: events.at(-1), faults, cancelled };
}

function checkLine(pkg, line, faults) {
  if (line.length === 0) {
    faults.push('a blank line');
    return undefined;
  }
  let parsed;
  try {
    parsed = JSON.parse(line);
  } catch {
    faults.push(`not JSON: ${line.slice(0, 80)}`);
    return undefined;
  }
  if (JSON.stringify(parsed) !== line) faults.push(`not compact JSON: ${line.slice(0, 80)}`);
  const decoded = pkg.decodeTurnEvent(line);
  if (!decoded.ok) faults.push(`decodeTurnEvent rejected a line: ${decoded.diagnostic.code} ${decoded.diagnostic.message}`);
  return parsed;
}

/** A response's error body and the headers a diagnostic must carry, as plain data. */
export async function errorOf(response) {
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    cacheControl: response.headers.get('cache-control'),
    body,
  };
}

/** Assistant text of the last assistant message in `messages`. */
export function assistantText(messages) {
  return [...messages].reverse().find((m) => m.role === 'assistant')?.content ?? '';
}

/** `w1 w2 … wN`, what the demo model streams for `/words N`. */
export function words(n) {
  return Array.from({ length: n }, (_, i) => `w${i + 1}`).join(' ');
}

// ---------------------------------------------------------------------------------------------
// Scenarios run both in Node and in Chromium. Each returns plain data (no Web objects) so a
// page can hand it back to Node, where tests/support/chat-checks.mjs asserts on it.
// ---------------------------------------------------------------------------------------------

/** A plain turn: headers, every line, the stored messages and session, storage writes. */
export async function scenarioHappyPath(pkg) {
  const { handler, storage, memory } = demoSetup(pkg);
  const response = await handler(chatRequest(submitEvent({ sessionId: 'happy', turnId: 't1', input: 'hello there' })));
  const headers = Object.fromEntries(response.headers);
  const turn = await readTurn(pkg, response);
  return {
    status: response.status,
    headers,
    events: turn.events,
    faults: turn.faults,
    text: turn.text,
    memory: memory.messages,
    stored: await storage.stored('happy'),
    writes: storage.savesOf('t1').length,
  };
}

/** 413 two ways, proving the body was not read whole (and not at all by Content-Length). */
export async function scenarioTooLarge(pkg) {
  const { handler } = demoSetup(pkg, { options: { maxBodyBytes: 4096 } });
  // Browsers drop a Content-Length set on a constructed Request (a forbidden header), so this
  // half only runs where the runtime keeps it (Node, workerd); `byLength` is null otherwise.
  const declared = recordingBody([JSON.stringify(submitEvent())]);
  const declaredRequest = chatRequest(declared.stream, { headers: { 'content-length': '999999' } });
  const lengthKept = declaredRequest.headers.get('content-length') === '999999';
  const byLength = lengthKept ? await handler(declaredRequest) : null;
  const endless = recordingBody(Infinity);
  const byCount = await handler(chatRequest(endless.stream));
  const atLimit = await handler(chatRequest(paddedBody(submitEvent({ turnId: 'at-limit' }), 4096).stream));
  const over = paddedBody(submitEvent({ turnId: 'over' }), 4097);
  const overByOne = await handler(chatRequest(over.stream));
  if (atLimit.body) await atLimit.body.cancel();
  return {
    lengthKept,
    byLength: byLength && { ...(await errorOf(byLength)), pulls: declared.pulls },
    byCount: { ...(await errorOf(byCount)), pulls: endless.pulls, cancelled: endless.cancelled },
    atLimitStatus: atLimit.status,
    overByOne: { ...(await errorOf(overByOne)), cancelled: over.cancelled },
  };
}

/** `event` as JSON padded with spaces to exactly `bytes` bytes, streamed in 1000-byte chunks. */
function paddedBody(event, bytes) {
  const json = JSON.stringify(event);
  const text = json + ' '.repeat(bytes - json.length);
  const chunks = [];
  for (let i = 0; i < text.length; i += 1000) chunks.push(text.slice(i, i + 1000));
  return recordingBody(chunks);
}

/**
 * The client aborts the request (its AbortController) after `afterLines` snapshots of a long
 * turn, then keeps reading. Then a next turn on the same session.
 */
export async function scenarioAbortMidStream(pkg, { afterLines = 3 } = {}) {
  const { handler, storage, memory } = demoSetup(pkg, { chunkDelayMs: 5 });
  const client = new AbortController();
  const request = chatRequest(submitEvent({ sessionId: 'abort', turnId: 't1', input: '/words 400' }), { signal: client.signal });
  const response = await handler(request);
  const turn = await readTurn(pkg, response, {
    onLine: (_event, count) => {
      if (count === afterLines) client.abort();
    },
  });
  const released = await storage.released('t1');
  const saved = { messages: structuredClone(memory.messages), saves: memory.saves };
  const next = await handler(chatRequest(submitEvent({ sessionId: 'abort', turnId: 't2', input: 'again' })));
  const nextTurn = next.status === 200 ? await readTurn(pkg, next) : { last: await errorOf(next), faults: [] };
  return {
    status: response.status,
    last: turn.last,
    snapshots: turn.snapshots.length,
    faults: [...turn.faults, ...nextTurn.faults],
    memory: saved.messages,
    memorySaves: saved.saves,
    released: { activeTurn: released.activeTurn ?? null, terminalTurns: released.terminalTurns },
    nextStatus: next.status,
    nextLast: nextTurn.last,
    fullText: words(400),
  };
}

/**
 * A reader 10× slower than the model: `/words N` at 1 ms per chunk, 10 ms before each read.
 * State changes are counted as the model's chunks (each word changes the controller's state).
 */
export async function scenarioSlowReader(pkg, { n = 60, readDelayMs = 10, chunkDelayMs = 1 } = {}) {
  const { handler, storage } = demoSetup(pkg, { chunkDelayMs });
  const response = await handler(chatRequest(submitEvent({ sessionId: 'slow', turnId: 't1', input: `/words ${n}` })));
  const turn = await readTurn(pkg, response, { delayMs: readDelayMs });
  return {
    status: response.status,
    sequences: turn.snapshots.map((e) => e.sequence),
    snapshots: turn.snapshots.length,
    diagnostics: turn.diagnostics.length,
    stateChanges: n,
    last: turn.last,
    expectedText: words(n),
    faults: turn.faults,
    writes: storage.savesOf('t1').length,
  };
}
