// The chat ports over turnkeep's Durable Objects, for a user's own Worker: SessionStorage and
// ChatMemory over a `ChatSession` object's RPC methods, the SessionLog over a `SessionStream`
// object's Durable Streams protocol (its stub's `fetch`). Each call only forwards: the
// compare-and-set, the row split and the message checks run inside ChatSession (Rust:
// src/cloudflare/store.rs over rows.rs), producer fencing inside SessionStream
// (core::streams::producer), and the log's client side is createDurableStreamsLog's
// (web::adapters::http_log). The demo Worker's Rust ports make the same calls
// (src/cloudflare/session_ports.rs), on objects of the same names, so either reads the other's.
//
// One ChatSession per (tenant, session), named `<tenant>/<sessionId>`; one SessionStream per
// session log, named `chat/<tenant>/<sessionId>`. A session id is a SafeId (no `/`), so two
// tenants never share an object.
import { createDurableStreamsLog } from '../workerd.mjs';
import { isSafeId } from '../../pkg/turnkeep.js';
import { checkOptions, checkSessionId, checkSessionOption, invalidConfig } from '../stores/common.mjs';

/** The object names (the demo Worker's `routes::chat_session_name` and `streams::route::chat_stream_name`). */
export const chatSessionName = (tenant, sessionId) => `${tenant}/${sessionId}`;
export const chatStreamName = (tenant, sessionId) => `chat/${tenant}/${sessionId}`;

/** Where a SessionStream object's stub is asked (its `fetch` reads only the path). */
const STREAM_ORIGIN = 'https://session-stream.internal/v1/stream/';

function checkNamespace(where, namespace) {
  if (typeof namespace?.idFromName !== 'function' || typeof namespace?.get !== 'function') {
    throw invalidConfig(where, 'namespace must be a Durable Object namespace binding (env.CHAT_SESSION, env.SESSION_STREAM)');
  }
  return namespace;
}

// The SafeId rule (core::checks::is_safe_id, from the wasm), so an object's name is also a URL
// path as it is.
export { isSafeId };

function tenantOption(where, tenant) {
  if (!isSafeId(tenant)) throw invalidConfig(where, 'tenant must be a SafeId (1-128 of A-Z a-z 0-9 . _ : -)');
  return tenant;
}

const stubOf = (namespace, name) => namespace.get(namespace.idFromName(name));

/**
 * SessionStorage of one tenant over `ChatSession` objects: each call goes to the object of the
 * session it names, where a save is one compare-and-set transaction (a lost race is `false`).
 */
export function createDurableObjectSessionStorage(options) {
  const where = 'createDurableObjectSessionStorage';
  const { namespace, tenant } = checkOptions(where, options);
  checkNamespace(where, namespace);
  tenantOption(where, tenant);
  const object = (sessionId) => stubOf(namespace, chatSessionName(tenant, checkSessionId(where, sessionId)));
  return {
    load: async (sessionId) => (await object(sessionId).loadSession(sessionId)) ?? undefined,
    save(snapshot, expectedCursor) {
      const sessionId = (typeof snapshot === 'string' ? JSON.parse(snapshot) : snapshot)?.sessionId;
      return object(sessionId).saveSession(snapshot, expectedCursor ?? null);
    },
    delete: (sessionId) => object(sessionId).deleteSession(sessionId),
  };
}

/** ChatMemory of one session, in the same `ChatSession` object (rows of at most 256 KiB). */
export function createDurableObjectChatMemory(options) {
  const where = 'createDurableObjectChatMemory';
  const { namespace, tenant, sessionId } = checkOptions(where, options);
  checkNamespace(where, namespace);
  tenantOption(where, tenant);
  const stub = stubOf(namespace, chatSessionName(tenant, checkSessionOption(where, sessionId)));
  return { load: () => stub.loadMessages(), save: (messages, options) => stub.saveMessages(messages, options?.fence) };
}

/**
 * The session log of one session: a `SessionStream` object (Durable Streams with idempotent
 * producers), reached through its stub, never over the Worker's public routes.
 */
export function createDurableObjectSessionLog(options) {
  const where = 'createDurableObjectSessionLog';
  const { namespace, tenant, sessionId } = checkOptions(where, options);
  checkNamespace(where, namespace);
  tenantOption(where, tenant);
  const name = chatStreamName(tenant, checkSessionOption(where, sessionId));
  return createDurableStreamsLog(streamTarget(namespace, name));
}

/** `{ url, fetch }` of the stream `name`: what createDurableStreamsLog and createChatStreamProxy take. */
export function streamTarget(namespace, name) {
  const stub = stubOf(namespace, name);
  return { url: `${STREAM_ORIGIN}${name}`, fetch: (request) => stub.fetch(request) };
}
