// `turnkeep/redis`: durable session storage and chat memory on Redis, for hosts outside
// Cloudflare (Node, or an edge runtime over an HTTP Redis client). The host creates and owns
// the client; these functions only send it Lua scripts (see stores/redis/client.mjs for the
// client shapes accepted).
//
// Keys: `<prefix>{<sessionId>}:session` (a hash: cursor, envelope) and
// `<prefix>{<sessionId>}:messages` (a list, one message per element). The braces are a Redis
// Cluster hash tag: every key of one session lands in one slot, so a script may touch several
// of them (the session log, when it comes, is a third key beside these two).

import { checkKeyPart, checkOptions, checkSessionOption, invalidConfig } from './stores/common.mjs';
import { redisChatMemory } from './stores/redis/chat-memory.mjs';
import { redisEval } from './stores/redis/client.mjs';
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
  return redisChatMemory(redisEval(where, client), sessionKey(prefix, sessionId, 'messages'));
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
