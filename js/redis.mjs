// `turnkeep/redis`: durable session storage, chat memory and session logs on Redis, for hosts
// outside Cloudflare (Node, or an edge runtime over an HTTP Redis client). The host creates and
// owns the client; these functions only send it Lua scripts (see stores/redis/client.mjs for
// the client shapes accepted).
//
// Keys: `<prefix>{<sessionId>}:session` (a hash: cursor, envelope),
// `<prefix>{<sessionId>}:messages` (a list, one message per element) with `…:messages-fence`
// (the highest memory fence a save was made under), and the session log's
// `<prefix>{<sessionId>}:log` (a list, one chunk per element) and `…:log-head` (a hash: version,
// head). The braces are a Redis Cluster hash tag: every key of one session lands in one slot,
// so a script may touch several of them.

// The session log is decided in Rust (createStoreSessionLog): the package's own entry, loaded
// by name so each runtime gets its own (node, workerd, browser).
import { createStoreSessionLog } from 'turnkeep';

import { checkKeyPart, checkOptions, checkSessionOption, invalidConfig } from './stores/common.mjs';
import { redisChatMemory } from './stores/redis/chat-memory.mjs';
import { redisEval } from './stores/redis/client.mjs';
import { redisLogStore } from './stores/redis/session-log.mjs';
import { redisSessionStorage } from './stores/redis/session-storage.mjs';

export const REDIS_PREFIX_DEFAULT = 'turnkeep:';

/**
 * Session storage with an atomic compare-and-set (one Lua script per save).
 * @param {{ client: object, prefix?: string }} options  `prefix` (default `turnkeep:`) keeps
 *   apps or tenants apart, e.g. `app:${tenant}/`; it must not contain `{` or `}`.
 */
export function createRedisSessionStorage(options) {
  const where = 'createRedisSessionStorage';
  const { client, prefix } = readOptions(where, options);
  return redisSessionStorage(redisEval(where, client), (sessionId) => sessionKey(prefix, sessionId, 'session'));
}

/**
 * The canonical messages of one session (a list replaced atomically by each save). Create one
 * per session in `resolveDefinition(context, sessionId)`; it is a few closures, cheap to make.
 * @param {{ client: object, sessionId: string, prefix?: string }} options
 */
export function createRedisChatMemory(options) {
  const where = 'createRedisChatMemory';
  const { client, prefix } = readOptions(where, options);
  const sessionId = checkSessionOption(where, options.sessionId);
  const keys = { messages: sessionKey(prefix, sessionId, 'messages'), fence: sessionKey(prefix, sessionId, 'messages-fence') };
  return redisChatMemory(redisEval(where, client), keys);
}

/**
 * The item store of one session's log: `{ head, commit, items }`, with `commit` one Lua script
 * (compare the head's version, append the items, write the head). For `createStoreSessionLog`,
 * or use `createRedisSessionLog`, which is exactly that.
 * @param {{ client: object, sessionId: string, prefix?: string }} options
 */
export function createRedisSessionLogStore(options) {
  const where = 'createRedisSessionLogStore';
  const { client, prefix } = readOptions(where, options);
  const sessionId = checkSessionOption(where, options.sessionId);
  const keys = { head: sessionKey(prefix, sessionId, 'log-head'), items: sessionKey(prefix, sessionId, 'log') };
  return redisLogStore(redisEval(where, client), keys);
}

/**
 * One session's durable log on Redis, for `createChatHandler({ sessionLog })`: appends fenced by
 * producer `(id, epoch, seq)` exactly as every turnkeep log (decided in Rust), reads from an
 * offset, long-poll by polling the head. Cheap to create per request.
 * @param {{ client: object, sessionId: string, prefix?: string }} options
 */
export function createRedisSessionLog(options) {
  return createStoreSessionLog({ store: createRedisSessionLogStore(options) });
}

function readOptions(where, options) {
  const { client, prefix = REDIS_PREFIX_DEFAULT } = checkOptions(where, options);
  checkKeyPart(where, 'prefix', prefix);
  if (/[{}]/.test(prefix)) throw invalidConfig(where, 'prefix must not contain { or } (the session id is the hash tag)');
  return { client, prefix };
}

function sessionKey(prefix, sessionId, kind) {
  return `${prefix}{${sessionId}}:${kind}`;
}
