// A durable chat server for Node on Redis or Postgres: the demo page, the chat endpoint and a
// session view, the same routes as the demo Worker (README.md, "The demo Worker") minus the Durable Streams routes.
// Any number of these processes may serve the same sessions: the lease, the history and the
// session log live in the database, so a stop sent to any process stops the turn wherever it runs.
//
//   GET  /                          the demo chat page (js/cloudflare/demo-page.html, as is)
//   POST /api/chat                  createChatHandler over the demo model and the durable stores,
//                                   every turn published to the session's log
//   GET  /api/sessions/:sessionId   { messages, session: { cursor, activeTurn, terminalTurns,
//                                   confirmations }, offset, renderParts, streamMessages }
//                                   (storage, plus resolveChatSnapshot of the session's log)
//
// Demo auth, as in the Worker: `Authorization: Bearer <tenant>` with a SafeId tenant.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createChatHandler, createDemoModel, decodeSessionSnapshot, defineChat, resolveChatSnapshot, toNodeHandler } from 'turnkeep';

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const SESSION_ROUTE = /^\/api\/sessions\/([^/]+)$/;
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };
const PAGE_HTML = readFileSync(new URL('../../js/cloudflare/demo-page.html', import.meta.url), 'utf8');

const DEMO_TOOLS = [
  {
    name: 'lookup',
    description: 'Looks a query up (demo tool).',
    parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    execute: ({ query }) => `result for ${query}`,
  },
  {
    name: 'transfer',
    description: 'Transfers an amount (demo tool; a person must approve it).',
    parameters: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
    requiresConfirmation: true,
    execute: ({ amount }) => `transferred ${amount}`,
  },
];

/**
 * The node:http server over `store` (see stores.mjs). `chunkDelayMs` paces the demo model;
 * `timeoutMs` and `cleanupTimeoutMs` go to createChatHandler (the lease is their sum, cleanup x3).
 */
export function durableChatServer(store, { chunkDelayMs, timeoutMs, cleanupTimeoutMs, onError } = {}) {
  const model = createDemoModel(chunkDelayMs === undefined ? {} : { chunkDelayMs });
  const chat = createChatHandler({
    authenticate: (request) => demoAuth(request),
    resolveDefinition: ({ tenant }, sessionId) =>
      defineChat({ id: 'demo', revision: 1, model, memory: store.memory(tenant, sessionId), tools: DEMO_TOOLS }),
    sessionStorage: ({ tenant }) => store.sessionStorage(tenant),
    sessionLog: ({ tenant }, sessionId) => store.log(tenant, sessionId),
    timeoutMs,
    cleanupTimeoutMs,
  });
  const route = async (request) => {
    const { pathname } = new URL(request.url);
    if (pathname === '/' && request.method === 'GET') return new Response(PAGE_HTML, { headers: { 'content-type': 'text/html; charset=utf-8' } });
    if (pathname === '/api/chat') return chat(request);
    const session = SESSION_ROUTE.exec(pathname);
    if (session && request.method === 'GET') return sessionView(store, request, decodeURIComponent(session[1]));
    return diagnostic(404, 'NOT_FOUND', 'No such route.', false);
  };
  return createServer(toNodeHandler(route, { onError }));
}

function demoAuth(request) {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '');
  if (match && SAFE_ID.test(match[1])) return { ok: true, context: { tenant: match[1] } };
  return { ok: false, response: diagnostic(401, 'AUTH_REQUIRED', 'Send Authorization: Bearer <tenant>, a SafeId.', false) };
}

/** What is stored for one session, read through the same stores the handler writes. */
async function sessionView(store, request, sessionId) {
  const auth = demoAuth(request);
  if (!auth.ok) return auth.response;
  if (!SAFE_ID.test(sessionId)) return diagnostic(400, 'REQUEST_INVALID_SESSION_ID', 'The session id must be a SafeId.', false);
  try {
    const { tenant } = auth.context;
    const [stored, messages, stream] = await Promise.all([
      store.sessionStorage(tenant).load(sessionId),
      store.memory(tenant, sessionId).load(),
      resolveChatSnapshot({ target: store.log(tenant, sessionId) }),
    ]);
    const decoded = stored === undefined ? undefined : decodeSessionSnapshot(stored);
    if (decoded && !decoded.ok) throw new Error(`stored session ${sessionId}: ${decoded.diagnostic.code} ${decoded.diagnostic.message}`);
    const session = decoded?.snapshot;
    const body = {
      messages,
      session: {
        cursor: session?.cursor ?? 0,
        activeTurn: session?.activeTurn ?? null,
        terminalTurns: session?.terminalTurns ?? [],
        confirmations: session?.confirmations ?? [],
      },
      offset: stream.offset,
      renderParts: stream.renderParts,
      streamMessages: stream.messages,
    };
    return new Response(JSON.stringify(body), { headers: JSON_HEADERS });
  } catch (error) {
    console.error('[durable-node] GET /api/sessions failed:', error);
    return diagnostic(500, 'SERVER_INTERNAL', 'The session could not be read.', true);
  }
}

function diagnostic(status, code, message, retryable) {
  return new Response(JSON.stringify({ error: { version: 1, code, message, retryable } }), { status, headers: JSON_HEADERS });
}
