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
