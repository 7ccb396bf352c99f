// A test Worker that drives turnkeep's Durable Objects (the classes `turnkeep/cloudflare`
// exports, which the demo Worker deploys) through the package's own ports
// (js/durable-objects/ports.mjs): the SessionStorage and SessionLog conformance suites run
// here, inside workerd, against the ChatSession object's compare-and-set (one SQL transaction
// per save), the SessionStream object's producer fencing and the ChatMemory conformance suite
// against the ChatSession object's memory fence. Deliberately broken adapters over the same
// objects (a save that ignores the cursor, a log that drops producer stamps, a memory that
// drops the fence) show each suite can fail.
import { checkSessionStorage } from '../../js/testing/session-storage-conformance.mjs';
import { checkSessionLog } from '../../js/testing/session-log-conformance.mjs';
import { checkChatMemory } from '../../js/testing/chat-memory-conformance.mjs';
import { createDemoModel } from '../../js/workerd.mjs';
import {
  createCloudflareChat,
  createDurableObjectChatMemory,
  createDurableObjectSessionLog,
  createDurableObjectSessionStorage,
} from '../../js/cloudflare.mjs';

export { ChatSession, SessionStream } from '../../js/cloudflare.mjs';

let run = 0;

// createCloudflareChat with a context that is an object and no `tenant`: refused, never one
// tenant for every user. What onError heard is kept for the test to read.
const faults = [];
const objectContext = createCloudflareChat({
  authenticate: () => ({ ok: true, context: { user: 'someone' } }),
  definition: { id: 'tenant-check', model: createDemoModel({ chunkDelayMs: 0 }) },
  api: '/object-context/chat',
  onError: (error, info) => faults.push({ stage: info.stage, code: error?.code ?? null, message: String(error?.message ?? error) }),
});

/** Last write wins: the cursor is never compared (what the storage suite must catch). */
function lastWriteWins(storage) {
  return { ...storage, save: async (snapshot) => { await storage.delete(snapshot.sessionId); return storage.save(snapshot, undefined); } };
}

/** The memory fence dropped: every save is an unfenced one (what the memory suite must catch). */
function unfencedMemory(memory) {
  return { load: (options) => memory.load(options), save: (messages) => memory.save(messages) };
}

/** Producer stamps dropped: every append is a plain one (what the log suite must catch). */
function unfenced(log) {
  return { append: (chunks, options = {}) => log.append(chunks, { signal: options.signal }), read: (options) => log.read(options) };
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const tenant = url.searchParams.get('tenant') ?? 'tenant';
    const sessionId = url.searchParams.get('session') ?? 'session';
    const fresh = (what) => `${what}-${Date.now()}-${++run}`;
    if (url.pathname.startsWith('/object-context/chat')) return objectContext.fetch(request, env);
    try {
      switch (url.pathname) {
        case '/conformance': {
          // Each case gets a fresh tenant, hence fresh Durable Objects: a fresh storage.
          const concurrency = Number(url.searchParams.get('concurrency') ?? 32);
          const broken = url.searchParams.get('broken') === '1';
          const prefix = fresh('conformance');
          let n = 0;
          const make = () => {
            const storage = createDurableObjectSessionStorage({ namespace: env.CHAT_SESSION, tenant: `${prefix}-${++n}` });
            return broken ? lastWriteWins(storage) : storage;
          };
          return Response.json(await checkSessionStorage(make, { concurrency }));
        }
        case '/log-conformance': {
          const broken = url.searchParams.get('broken') === '1';
          const logTenant = fresh('log');
          let n = 0;
          const make = () => {
            const log = createDurableObjectSessionLog({ namespace: env.SESSION_STREAM, tenant: logTenant, sessionId: `s${++n}` });
            return broken ? unfenced(log) : log;
          };
          return Response.json(await checkSessionLog(make, { racers: 12, longPollMs: 300 }));
        }
        case '/memory-conformance': {
          const broken = url.searchParams.get('broken') === '1';
          const memoryTenant = fresh('memory');
          let n = 0;
          const make = () => {
            const memory = createDurableObjectChatMemory({ namespace: env.CHAT_SESSION, tenant: memoryTenant, sessionId: `s${++n}` });
            return broken ? unfencedMemory(memory) : memory;
          };
          return Response.json(await checkChatMemory(make));
        }
        case '/object-context/faults':
          return Response.json(faults);
        case '/memory/save':
          await createDurableObjectChatMemory({ namespace: env.CHAT_SESSION, tenant, sessionId }).save(await request.json());
          return Response.json({ ok: true });
        case '/memory/load':
          return Response.json(await createDurableObjectChatMemory({ namespace: env.CHAT_SESSION, tenant, sessionId }).load());
        case '/stats':
          return Response.json(await env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(`${tenant}/${sessionId}`)).stats());
        case '/session/save': {
          const { snapshot, expectedCursor } = await request.json();
          return Response.json(await createDurableObjectSessionStorage({ namespace: env.CHAT_SESSION, tenant }).save(snapshot, expectedCursor));
        }
        case '/session/load':
          return Response.json((await createDurableObjectSessionStorage({ namespace: env.CHAT_SESSION, tenant }).load(sessionId)) ?? null);
        default:
          return new Response('not found', { status: 404 });
      }
    } catch (error) {
      return Response.json({ thrown: String(error?.message ?? error) }, { status: 500 });
    }
  },
};
