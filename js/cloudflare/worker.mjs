// The demo Worker (design §8): `wrangler dev` serves it on http://127.0.0.1:8787.
//
//   GET  /?session=<id>[&panes=3]   the demo chat page, server-rendered (demo-page.mjs)
//   POST /api/chat                  createChatHandler (demo model, or OPENAI_BASE_URL's model)
//   GET  /api/sessions/:sessionId   { messages, session, offset, renderParts }
//   GET  /api/chat/stream/:sessionId  createChatStreamProxy: the session's stream for a browser
//   /v1/stream/*                    the Durable Streams server (session-stream.mjs)
//   POST /api/ask                   createAskServiceHandler over the docs (demo-ask.mjs)
//   GET  /mcp/sandbox?uri=&theme=   createMcpSandboxHandler, ui://demo/hello and ui://demo/chart (demo-sandbox.mjs)
//   /turnkeep/*, /demo/*            static assets (wrangler.toml [assets]): the package's browser
//                                   entry and wasm, and the page's script (scripts/demo-assets.mjs)
//
// Demo auth: `Authorization: Bearer <tenant>` with a SafeId tenant, else our own 401 (the page
// itself is rendered for the tenant in the `turnkeep_tenant` cookie, default `demo`). Each
// (tenant, session) lives in its own `ChatSession` Durable Object (named `<tenant>/<sessionId>`),
// which holds the session envelope (compare-and-set) and the canonical messages. Every turn is
// also published to the session's durable stream `chat/<tenant>/<sessionId>` (a `SessionStream`
// object, reached through its stub: no hop through the Worker), which every tab reads.
import {
  createChatHandler,
  createChatStreamProxy,
  createDemoModel,
  createOpenAICompatibleModel,
  defineChat,
  resolveChatSnapshot,
} from '../workerd.mjs';
import { demoAskHandler } from './demo-ask.mjs';
import { renderDemoPage } from './demo-page.mjs';
import { CHART_SCRIPT, CHART_SCRIPT_PATH, demoSandboxHandler } from './demo-sandbox.mjs';
import { chatStreamPath, routeStreams, sessionStreamLog } from './session-stream.mjs';
import { readSessionView, SAFE_ID, sessionChatMemory, tenantSessionStorage } from './storage.mjs';

export { ChatSession } from './chat-session.mjs';
export { SessionStream } from './session-stream.mjs';

const SESSION_ROUTE = /^\/api\/sessions\/([^/]+)$/;
const CHAT_STREAM_ROUTE = /^\/api\/chat\/stream\/([^/]+)$/;
const TENANT_COOKIE = /(?:^|;\s*)turnkeep_tenant=([^;]*)/;
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** The tools the demo model calls (`/tool Q` and `/confirm N`, design §8). */
const DEMO_TOOLS = Object.freeze([
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
]);

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const { pathname } = url;
    if (pathname === '/') return page(request, env, url);
    if (pathname === '/api/chat') return chat(request, env, ctx);
    if (CHAT_STREAM_ROUTE.test(pathname)) {
      // Read-only for browsers: the log is written by turns (POST /api/chat), never directly.
      if (request.method !== 'GET' && request.method !== 'HEAD') return methodNotAllowed('GET, HEAD');
      return chatStreamProxy(env)(request);
    }
    if (pathname === '/api/ask') return demoAskHandler(env, { authenticate: demoAuth, modelFromEnv })(request);
    if (pathname === '/mcp/sandbox') return demoSandboxHandler(request);
    if (pathname === CHART_SCRIPT_PATH) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return methodNotAllowed('GET, HEAD');
      return new Response(CHART_SCRIPT, { headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' } });
    }
    const session = SESSION_ROUTE.exec(pathname);
    if (session) return sessionView(request, env, safeDecode(session[1]));
    const streams = routeStreams(request, env, url);
    if (streams) return streams;
    return diagnostic(404, 'NOT_FOUND', 'No such route.', false);
  },
};

const handlers = new WeakMap();
const proxies = new WeakMap();

/**
 * GET /api/chat/stream/:sessionId: the exported chat-stream proxy. The target is resolved per
 * request: demo auth (a denial is answered as is), then the stream `chat/<tenant>/<sessionId>`
 * through the Worker's own stream route, with the server-side streams token as `auth`.
 */
function chatStreamProxy(env) {
  let proxy = proxies.get(env);
  if (!proxy) {
    proxy = createChatStreamProxy({
      target: (request) => {
        const auth = demoAuth(request);
        if (!auth.ok) return auth.response;
        const sessionId = safeDecode(CHAT_STREAM_ROUTE.exec(new URL(request.url).pathname)[1]);
        if (!SAFE_ID.test(sessionId)) {
          return diagnostic(400, 'REQUEST_INVALID_SESSION_ID', 'The session id must be a SafeId.', false);
        }
        return {
          url: `https://streams.internal${chatStreamPath(auth.context.tenant, sessionId)}`,
          fetch: (upstream) => routeStreams(upstream, env),
        };
      },
      auth: env.STREAMS_TOKEN ? { authorization: `Bearer ${env.STREAMS_TOKEN}` } : undefined,
      onError: ({ code, cause }) => console.error(`chat stream proxy: ${code}`, cause),
    });
    proxies.set(env, proxy);
  }
  return proxy;
}

/**
 * GET /: the chat page of `?session=<id>` for the tenant of the `turnkeep_tenant` cookie, with
 * the conversation rendered in (no session, or not a SafeId: a redirect to a new one).
 */
async function page(request, env, url) {
  if (request.method !== 'GET' && request.method !== 'HEAD') return methodNotAllowed('GET, HEAD');
  const panes = url.searchParams.get('panes') === '3' ? 3 : 1;
  const sessionId = url.searchParams.get('session') ?? '';
  if (!SAFE_ID.test(sessionId)) {
    const fresh = `session-${crypto.randomUUID().slice(0, 8)}`;
    return new Response(null, {
      status: 302,
      headers: { location: `/?session=${fresh}${panes === 3 ? '&panes=3' : ''}`, 'cache-control': 'no-store' },
    });
  }
  const cookie = TENANT_COOKIE.exec(request.headers.get('cookie') ?? '');
  const fromCookie = cookie ? safeDecode(cookie[1]) : '';
  const tenant = SAFE_ID.test(fromCookie) ? fromCookie : 'demo';
  try {
    const snapshot = await resolveChatSnapshot({ target: sessionStreamLog(env, tenant, sessionId) });
    return new Response(renderDemoPage({ tenant, sessionId, panes, snapshot }), {
      headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
    });
  } catch (error) {
    console.error('GET / failed:', error);
    return diagnostic(500, 'SERVER_INTERNAL', 'The session could not be read.', true);
  }
}

/**
 * POST /api/chat: a turn (`client.turn.submit`) or a stop (`client.turn.stop`). `ctx` keeps a
 * running turn alive past the response (`ctx.waitUntil`): a client that disconnects leaves the
 * turn running to its end, published to the session stream that other tabs follow.
 */
function chat(request, env, ctx) {
  return chatHandler(env)(request, ctx);
}

/** One handler per `env` (per isolate in practice): options are checked once. */
function chatHandler(env) {
  let handler = handlers.get(env);
  if (!handler) {
    const model = modelFromEnv(env);
    handler = createChatHandler({
      authenticate: (request) => demoAuth(request),
      resolveDefinition: ({ tenant }, sessionId) =>
        defineChat({
          id: 'demo',
          revision: 1,
          model,
          memory: sessionChatMemory(env.CHAT_SESSION, tenant, sessionId),
          tools: DEMO_TOOLS,
        }),
      sessionStorage: ({ tenant }) => tenantSessionStorage(env.CHAT_SESSION, tenant),
      sessionLog: ({ tenant }, sessionId) => sessionStreamLog(env, tenant, sessionId),
      onError: (error, { stage, sessionId, turnId }) =>
        console.error(`chat ${stage} failed (session ${sessionId ?? '-'}, turn ${turnId ?? '-'}):`, error),
    });
    handlers.set(env, handler);
  }
  return handler;
}

/** The demo model, or an OpenAI-compatible endpoint when `OPENAI_BASE_URL` is set. */
function modelFromEnv(env) {
  if (env.OPENAI_BASE_URL) {
    return createOpenAICompatibleModel({
      baseUrl: env.OPENAI_BASE_URL,
      apiKey: env.OPENAI_API_KEY || undefined,
      model: env.OPENAI_MODEL || 'gpt-4o-mini',
    });
  }
  const delay = env.DEMO_CHUNK_DELAY_MS;
  return createDemoModel(delay === undefined || delay === '' ? {} : { chunkDelayMs: Number(delay) });
}

/** `Authorization: Bearer <tenant>`; anything else is the host's own 401 (no storage touched). */
export function demoAuth(request) {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '');
  if (match && SAFE_ID.test(match[1])) return { ok: true, context: { tenant: match[1] } };
  const response = diagnostic(401, 'AUTH_REQUIRED', 'Send Authorization: Bearer <tenant>, a SafeId.', false);
  response.headers.set('www-authenticate', 'Bearer realm="turnkeep demo"');
  return { ok: false, response };
}

async function sessionView(request, env, sessionId) {
  if (request.method !== 'GET') return methodNotAllowed('GET');
  const auth = demoAuth(request);
  if (!auth.ok) return auth.response;
  if (!SAFE_ID.test(sessionId)) return diagnostic(400, 'REQUEST_INVALID_SESSION_ID', 'The session id must be a SafeId.', false);
  try {
    const { tenant } = auth.context;
    const [{ session, messages }, stream] = await Promise.all([
      readSessionView(env.CHAT_SESSION, tenant, sessionId),
      resolveChatSnapshot({ target: sessionStreamLog(env, tenant, sessionId) }),
    ]);
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
    console.error('GET /api/sessions failed:', error);
    return diagnostic(500, 'SERVER_INTERNAL', 'The session could not be read.', true);
  }
}

/** A path segment decoded, or '' (never a SafeId) when its percent-encoding is broken. */
function safeDecode(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}

function methodNotAllowed(allow) {
  const response = diagnostic(405, 'REQUEST_METHOD_NOT_ALLOWED', `Only ${allow} is supported.`, false);
  response.headers.set('allow', allow);
  return response;
}

/** A versioned diagnostic body, the shape the chat handler uses before a stream starts. */
function diagnostic(status, code, message, retryable) {
  return new Response(JSON.stringify({ error: { version: 1, code, message, retryable } }), {
    status,
    headers: JSON_HEADERS,
  });
}
