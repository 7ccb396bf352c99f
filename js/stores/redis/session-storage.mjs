// SessionStorage over Redis: one hash per session, `{ cursor, envelope }`, written only by a
// Lua script that compares the stored cursor and writes in one step. Redis runs a script
// atomically, so of any number of racing saves with one expected cursor exactly one wins, and
// there is no read-then-write window between processes.

import { checkSessionId, expectedCursor, sessionRecord, storeCall, throwIfAborted } from '../common.mjs';

/**
 * The compare half of every compare-and-set script here, as Lua: returns 0, changing nothing,
 * unless field `field` of hash KEYS[1] is ARGV[1] (ARGV[1] '' : the field must not exist yet).
 */
export function luaExpectField(field) {
  return `
local stored = redis.call('HGET', KEYS[1], '${field}')
if ARGV[1] == '' then
  if stored then return 0 end
elseif stored ~= ARGV[1] then
  return 0
end`;
}

/** The scripts of a conformant store (a test swaps in broken ones to prove the suite trips). */
export const SESSION_SCRIPTS = Object.freeze({
  // KEYS[1] the session hash. Returns the envelope text, or nil.
  load: "return redis.call('HGET', KEYS[1], 'envelope')",
  // KEYS[1] the session hash; ARGV: expected cursor ('' = only if absent), new cursor, envelope.
  // Returns 1 when written, 0 on conflict.
  save: `${luaExpectField('cursor')}
redis.call('HSET', KEYS[1], 'cursor', ARGV[2], 'envelope', ARGV[3])
return 1`,
  // KEYS[1] the session hash. Returns 1 when a record existed.
  delete: "return redis.call('DEL', KEYS[1])",
});

/**
 * `{ load, save, delete }` over `run` (see client.mjs); `keyOf(sessionId)` names the hash.
 * Cursors travel as decimal text: both sides are safe integers printed by `String`.
 */
export function redisSessionStorage(run, keyOf, scripts = SESSION_SCRIPTS) {
  const where = 'turnkeep/redis sessionStorage';
  return {
    async load(sessionId, signal) {
      const key = keyOf(checkSessionId(`${where}.load`, sessionId));
      throwIfAborted(signal);
      const stored = await storeCall(`${where}.load`, () => run(scripts.load, [key], []));
      return stored ?? undefined;
    },
    async save(snapshot, expected, signal) {
      const { sessionId, cursor, text } = sessionRecord(`${where}.save`, snapshot);
      const after = expectedCursor(`${where}.save`, expected);
      throwIfAborted(signal);
      const args = [after === undefined ? '' : String(after), String(cursor), text];
      const reply = await storeCall(`${where}.save`, () => run(scripts.save, [keyOf(sessionId)], args));
      return scriptFlag(`${where}.save`, reply);
    },
    async delete(sessionId, signal) {
      const key = keyOf(checkSessionId(`${where}.delete`, sessionId));
      throwIfAborted(signal);
      return scriptFlag(`${where}.delete`, await storeCall(`${where}.delete`, () => run(scripts.delete, [key], [])));
    },
  };
}

/** A script's 0/1 reply as a boolean. Anything else is an error, never a guess. */
export function scriptFlag(where, reply) {
  if (reply === 1) return true;
  if (reply === 0) return false;
  throw new Error(`${where}: the script replied ${JSON.stringify(reply)}, expected 0 or 1`);
}
