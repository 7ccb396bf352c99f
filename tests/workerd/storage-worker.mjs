// A test Worker that drives the ChatSession Durable Object (src/cloudflare/chat_session.rs, the
// demo Worker's class) directly over RPC: the storage conformance suite runs here, inside
// workerd, against the object's compare-and-set (one SQL transaction per save). The adapter is
// the same RPC calls the Worker's Rust SessionStorage makes (src/cloudflare/session_ports.rs).
import { checkSessionStorage } from '../../js/testing/session-storage-conformance.mjs';

export { ChatSession, SessionStream } from '../../js/cloudflare/worker.mjs';

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** The stub of the object holding `sessionId` of `tenant` (named `<tenant>/<sessionId>`). */
function chatSessionStub(namespace, tenant, sessionId) {
  if (!SAFE_ID.test(String(tenant)) || !SAFE_ID.test(String(sessionId))) throw new TypeError('tenant and session id must be SafeIds');
  return namespace.get(namespace.idFromName(`${tenant}/${sessionId}`));
}

/** SessionStorage of one tenant: each call goes to the object of the session it names. */
function tenantSessionStorage(namespace, tenant) {
  return {
    load: (sessionId) => chatSessionStub(namespace, tenant, sessionId).loadSession(sessionId),
    save(snapshot, expectedCursor) {
      const sessionId = (typeof snapshot === 'string' ? JSON.parse(snapshot) : snapshot)?.sessionId;
      return chatSessionStub(namespace, tenant, sessionId).saveSession(snapshot, expectedCursor ?? null);
    },
    delete: (sessionId) => chatSessionStub(namespace, tenant, sessionId).deleteSession(sessionId),
  };
}

function sessionChatMemory(namespace, tenant, sessionId) {
  const stub = chatSessionStub(namespace, tenant, sessionId);
  return { load: () => stub.loadMessages(), save: (messages) => stub.saveMessages(messages) };
}

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
