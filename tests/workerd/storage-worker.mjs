// A test Worker that drives the ChatSession Durable Object directly: the storage conformance
// suite runs here, inside workerd, against the same adapter the demo Worker hands to
// createChatHandler (tenantSessionStorage → RPC → ChatSessionStore's SQL transaction).
import { checkSessionStorage } from '../../js/testing/session-storage-conformance.mjs';
import { chatSessionStub, sessionChatMemory, tenantSessionStorage } from '../../js/cloudflare/storage.mjs';

export { ChatSession } from '../../js/cloudflare/chat-session.mjs';

let run = 0;

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const tenant = url.searchParams.get('tenant') ?? 'tenant';
    const sessionId = url.searchParams.get('session') ?? 'session';
    try {
      switch (url.pathname) {
        case '/conformance': {
          // Each case gets a fresh tenant, hence fresh Durable Objects: a fresh storage.
          const concurrency = Number(url.searchParams.get('concurrency') ?? 32);
          const prefix = `conformance-${Date.now()}-${++run}`;
          let n = 0;
          const report = await checkSessionStorage(() => tenantSessionStorage(env.CHAT_SESSION, `${prefix}-${++n}`), { concurrency });
          return Response.json(report);
        }
        case '/memory/save':
          await sessionChatMemory(env.CHAT_SESSION, tenant, sessionId).save(await request.json());
          return Response.json({ ok: true });
        case '/memory/load':
          return Response.json(await sessionChatMemory(env.CHAT_SESSION, tenant, sessionId).load());
        case '/stats':
          return Response.json(await chatSessionStub(env.CHAT_SESSION, tenant, sessionId).stats());
        case '/session/save': {
          const { snapshot, expectedCursor } = await request.json();
          return Response.json(await tenantSessionStorage(env.CHAT_SESSION, tenant).save(snapshot, expectedCursor));
        }
        case '/session/load':
          return Response.json((await tenantSessionStorage(env.CHAT_SESSION, tenant).load(sessionId)) ?? null);
        default:
          return new Response('not found', { status: 404 });
      }
    } catch (error) {
      return Response.json({ thrown: String(error?.message ?? error) }, { status: 500 });
    }
  },
};
