// How the Worker reaches a session's `ChatSession` Durable Object: the object's name is
// `<tenant>/<sessionId>` (both SafeIds, which never contain '/', so names cannot collide
// across tenants), and the ports handed to createChatHandler are thin RPC forwarders.
//
// Signals: a Durable Object RPC call cannot be cancelled mid-flight, and cleanup must save even
// after the client left, so the signal argument of the ports is deliberately not forwarded.

/** A SafeId (what the core's `is_safe_id` accepts): tenants, session ids, object names. */
export const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** The stub of the Durable Object holding `sessionId` of `tenant`. Throws for non-SafeIds. */
export function chatSessionStub(namespace, tenant, sessionId) {
  if (!SAFE_ID.test(String(tenant))) throw new TypeError('chatSessionStub: tenant must be a SafeId');
  if (!SAFE_ID.test(String(sessionId))) throw new TypeError('chatSessionStub: sessionId must be a SafeId');
  return namespace.get(namespace.idFromName(`${tenant}/${sessionId}`));
}

/**
 * The SessionStorage of one tenant: each call goes to the Durable Object of the session it
 * names, where compare-and-set runs as one transaction.
 */
export function tenantSessionStorage(namespace, tenant) {
  return {
    load: (sessionId) => chatSessionStub(namespace, tenant, sessionId).loadSession(sessionId),
    save(snapshot, expectedCursor) {
      const sessionId = (typeof snapshot === 'string' ? JSON.parse(snapshot) : snapshot)?.sessionId;
      return chatSessionStub(namespace, tenant, sessionId).saveSession(snapshot, expectedCursor ?? null);
    },
    delete: (sessionId) => chatSessionStub(namespace, tenant, sessionId).deleteSession(sessionId),
  };
}

/** The ChatMemory of one session: its canonical messages, in the same Durable Object. */
export function sessionChatMemory(namespace, tenant, sessionId) {
  const stub = chatSessionStub(namespace, tenant, sessionId);
  return {
    load: () => stub.loadMessages(),
    save: (messages) => stub.saveMessages(messages),
  };
}

/** `{ messages, session }` of one session as stored, read in one step inside its object. */
export async function readSessionView(namespace, tenant, sessionId) {
  const { session, messages } = await chatSessionStub(namespace, tenant, sessionId).view(sessionId);
  return { session: session == null ? null : JSON.parse(session), messages };
}

/**
 * Follows one request's turn through its session saves, so the Worker can keep the request
 * alive (`ctx.waitUntil(watch.settled)`) until the turn released its lease. Without it, workerd
 * drops a request's pending work when the client disconnects, and the cleanup that saves the
 * partial answer and frees the lease would never run (the lease would then block the session
 * until it expires).
 */
export class TurnWatch {
  #turnId;
  #settle;

  constructor() {
    this.settled = new Promise((resolve) => {
      this.#settle = resolve;
    });
  }

  /** True once a save claimed a lease for this request's turn. */
  get claimed() {
    return this.#turnId !== undefined;
  }

  /** The same storage; its saves tell the watch when the lease is claimed and released. */
  wrap(storage) {
    return {
      load: (sessionId, signal) => storage.load(sessionId, signal),
      save: async (snapshot, expectedCursor, signal) => {
        const activeTurnId = (typeof snapshot === 'string' ? JSON.parse(snapshot) : snapshot)?.activeTurn?.turnId;
        const releasing = this.claimed && activeTurnId !== this.#turnId;
        try {
          const written = await storage.save(snapshot, expectedCursor, signal);
          if (written && !this.claimed && activeTurnId !== undefined) this.#turnId = activeTurnId;
          return written;
        } finally {
          if (releasing) this.#settle();
        }
      },
    };
  }
}
