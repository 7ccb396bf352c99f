// createCloudflareChat: the chat routes of a user's own Worker over turnkeep's Durable Objects.
// Every route is one of the package's handlers, given the ports of ports.mjs; this file only
// says which request goes to which (a path prefix each) and builds the ports from `env`:
//
//   POST {api}                      createChatHandler (AgentsKit's turn wire: a send, a stop,
//                                   an approval's decision)
//   GET  {api}/stream/:sessionId    the session's log, live (createChatStreamProxy over the
//                                   SessionStream object: what turnkeep/client's connection reads)
//   GET  {api}/sessions/:sessionId  the session's snapshot (resolveChatSnapshot: the first paint)
//   {uiApi}, {uiApi}/...            createUIMessageChatHandler (the AI SDK's DefaultChatTransport,
//                                   TanStack AI's toTanStackConnection)
//
// Anything else answers null, for the Worker's own routes.
import {
  createChatHandler,
  createChatStreamProxy,
  createUIMessageChatHandler,
  resolveChatSnapshot,
} from '../workerd.mjs';
import { checkOptions, invalidConfig } from '../stores/common.mjs';
import {
  chatStreamName,
  createDurableObjectChatMemory,
  createDurableObjectSessionLog,
  createDurableObjectSessionStorage,
  isSafeId,
  streamTarget,
} from './ports.mjs';

const WHERE = 'createCloudflareChat';
const DEFAULTS = { api: '/api/chat', uiApi: '/api/ui/chat', chatSession: 'CHAT_SESSION', sessionStream: 'SESSION_STREAM' };
/** Options this file reads; the rest go to the handlers as they are. */
const OWN = ['definition', 'tenant', 'api', 'uiApi', 'bindings'];

/**
 * `{ handle(request, env, ctx) → Promise<Response | null>, fetch(request, env, ctx) → Promise<Response> }`:
 * `handle` answers the chat's routes and null for any other; `fetch` answers 404 for those.
 */
export function createCloudflareChat(options) {
  checkOptions(WHERE, options);
  const { definition, tenant = defaultTenant } = options;
  if (typeof definition !== 'function' && (typeof definition !== 'object' || definition === null)) {
    throw invalidConfig(WHERE, 'definition must be the options of defineChat (without memory) or a function (context, sessionId, memory) => definition');
  }
  if (typeof tenant !== 'function') throw invalidConfig(WHERE, 'tenant must be a function (context) => SafeId');
  const api = path(options.api ?? DEFAULTS.api, 'api');
  const uiApi = path(options.uiApi ?? DEFAULTS.uiApi, 'uiApi');
  const bindings = { chatSession: DEFAULTS.chatSession, sessionStream: DEFAULTS.sessionStream, ...options.bindings };
  const passed = Object.fromEntries(Object.entries(options).filter(([key]) => !OWN.includes(key)));
  // The handlers read their options once; `env` (the bindings) is the same object for every
  // request of an isolate, so each isolate builds them once.
  const perEnv = new WeakMap();
  const handlersOf = (env) => {
    let handlers = perEnv.get(env);
    if (!handlers) {
      handlers = build(env, { definition, tenant, bindings, passed });
      perEnv.set(env, handlers);
    }
    return handlers;
  };

  async function handle(request, env, ctx) {
    const { pathname } = new URL(request.url);
    const host = ctx && typeof ctx.waitUntil === 'function' ? { waitUntil: (p) => ctx.waitUntil(p) } : undefined;
    if (pathname === api) return handlersOf(env).chat(request, host);
    if (pathname === uiApi || pathname.startsWith(`${uiApi}/`)) return handlersOf(env).ui(request, host);
    const stream = segment(pathname, `${api}/stream/`);
    if (stream !== undefined) return handlersOf(env).stream(request);
    const session = segment(pathname, `${api}/sessions/`);
    if (session !== undefined && request.method === 'GET') return handlersOf(env).session(request, session);
    return null;
  }

  return {
    handle,
    fetch: async (request, env, ctx) => (await handle(request, env, ctx)) ?? new Response('Not found', { status: 404 }),
  };
}

function build(env, { definition, tenant, bindings, passed }) {
  const namespace = (name) => {
    const bound = env?.[name];
    if (!bound) throw invalidConfig(WHERE, `env.${name} is not bound: wrangler.toml needs its [[durable_objects.bindings]] (README, "On Cloudflare")`);
    return bound;
  };
  const chatSessions = namespace(bindings.chatSession);
  const sessionStreams = namespace(bindings.sessionStream);
  const tenantOf = (context) => tenant(context);
  const handlerOptions = {
    ...passed,
    resolveDefinition: async (context, sessionId, signal) => {
      const memory = createDurableObjectChatMemory({ namespace: chatSessions, tenant: tenantOf(context), sessionId });
      return typeof definition === 'function' ? definition(context, sessionId, memory, signal) : { ...definition, memory };
    },
    sessionStorage: (context) => createDurableObjectSessionStorage({ namespace: chatSessions, tenant: tenantOf(context) }),
    sessionLog: (context, sessionId) => createDurableObjectSessionLog({ namespace: sessionStreams, tenant: tenantOf(context), sessionId }),
  };
  // `authenticate` as the handlers run it, for the two read routes too.
  const authenticate = async (request) => (passed.authenticate ? passed.authenticate(request, request.signal) : { ok: true, context: undefined });
  const stream = createChatStreamProxy({
    target: async (request) => {
      const auth = await authenticate(request);
      if (!auth?.ok) return auth?.response ?? null;
      const sessionId = safeDecode(new URL(request.url).pathname.split('/').at(-1));
      if (!isSafeId(sessionId)) return null;
      return streamTarget(sessionStreams, chatStreamName(tenantOf(auth.context), sessionId));
    },
    onError: passed.onError ? (report) => passed.onError(report.cause, { stage: 'stream' }) : undefined,
  });
  return {
    chat: createChatHandler(handlerOptions),
    ui: createUIMessageChatHandler(handlerOptions),
    stream,
    async session(request, raw) {
      const sessionId = safeDecode(raw);
      if (!isSafeId(sessionId)) return null;
      // Every request ends as a Response: what fails here goes to onError, the client gets a bare 500.
      try {
        const auth = await authenticate(request);
        if (!auth?.ok) return auth?.response ?? new Response(null, { status: 403 });
        const target = createDurableObjectSessionLog({ namespace: sessionStreams, tenant: tenantOf(auth.context), sessionId });
        return Response.json(await resolveChatSnapshot({ target, sessionId, signal: request.signal }));
      } catch (error) {
        passed.onError?.(error, { stage: 'sessionLog', sessionId });
        return new Response(null, { status: 500 });
      }
    },
  };
}

/**
 * Without `tenant`: the context when it is a SafeId (a user id), one tenant `default` without
 * authentication (no context). Any other context is refused rather than guessed at: two users
 * mapped to one tenant would share their sessions.
 */
function defaultTenant(context) {
  if (context === undefined) return 'default';
  if (isSafeId(context)) return context;
  throw invalidConfig(WHERE, 'the context authenticate gave is not a SafeId: pass tenant(context) to say whose objects a request reaches');
}

function path(value, name) {
  if (typeof value !== 'string' || !value.startsWith('/') || value.length < 2 || value.endsWith('/')) {
    throw invalidConfig(WHERE, `${name} must be a path like /api/chat (a leading slash, no trailing one)`);
  }
  return value;
}

/** The one path segment after `prefix`, still encoded; undefined when the path is not that. */
function segment(pathname, prefix) {
  if (!pathname.startsWith(prefix)) return undefined;
  const raw = pathname.slice(prefix.length);
  return raw.length > 0 && !raw.includes('/') ? raw : undefined;
}

function safeDecode(raw) {
  try {
    return decodeURIComponent(raw);
  } catch {
    return '';
  }
}
