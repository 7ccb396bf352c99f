// The item store of a session log over Redis (`createStoreSessionLog` runs on it; every append
// is decided in Rust, with the producer fencing of every other turnkeep log). Two keys beside
// the session's own, under the same hash tag, so one script may touch both on Redis Cluster:
//   `<prefix>{<sessionId>}:log`       a list, one chunk (JSON text) per element, position = index
//   `<prefix>{<sessionId>}:log-head`  a hash: `version` (compared by the commit) and `head` (the
//                                     head's JSON text, kept verbatim)
//
// Why a list and not a Redis Stream: the log's positions are dense integers from 0 that Rust
// turns into offsets, and a list index is exactly that (LRANGE from a position; RPUSH appends at
// the tail, inside the same script as the compare-and-set). Stream entries carry ids of their own
// and field maps; blocking reads (XREAD BLOCK) cannot run inside a script nor over HTTP clients,
// and waiting is decided in Rust anyway. A list needs nothing every client lacks.

import { itemRange, logCommit, storedText, storeCall, throwIfAborted } from '../common.mjs';
import { PUSH_VALUES_MAX } from './chat-memory.mjs';
import { luaExpectField, scriptFlag } from './session-storage.mjs';

/** What the commit script answers when the list and the head disagree (never written by it). */
const INCONSISTENT = -1;

/** The scripts of a conformant store (a test swaps in a broken one to prove the suite trips). */
export const LOG_SCRIPTS = Object.freeze({
  // KEYS[1] the head hash. Returns the head's JSON text, or nil.
  head: "return redis.call('HGET', KEYS[1], 'head')",
  // KEYS[1] the head hash, KEYS[2] the item list; ARGV: expected version ('' = no head yet), new
  // version, new head, items stored before this commit, then one JSON text per item.
  // Returns 1 when written, 0 when the version was not the expected one, -1 when the list does
  // not hold as many items as the head says (a key evicted or edited by hand): nothing written.
  commit: `${luaExpectField('version')}
if redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[4]) then return ${INCONSISTENT} end
for i = 5, #ARGV, ${PUSH_VALUES_MAX} do
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + ${PUSH_VALUES_MAX - 1}, #ARGV)))
end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'head', ARGV[3])
return 1`,
  // KEYS[1] the item list; ARGV: first and last index (inclusive).
  items: "return redis.call('LRANGE', KEYS[1], ARGV[1], ARGV[2])",
});

/**
 * `{ head, commit, items }` (the store interface of src/web/adapters/log_store.rs) over `run`
 * (see client.mjs), on the two keys `{ head, items }`. Versions and positions travel as decimal
 * text: both sides are safe integers printed by `String`.
 */
export function redisLogStore(run, keys, scripts = LOG_SCRIPTS) {
  const where = 'turnkeep/redis sessionLog';
  return {
    async head({ signal } = {}) {
      throwIfAborted(signal);
      const stored = await storeCall(`${where}.head`, () => run(scripts.head, [keys.head], []));
      return stored === null || stored === undefined ? null : storedText(stored);
    },
    async commit(expectedVersion, items, head, { signal } = {}) {
      const commit = logCommit(`${where}.commit`, expectedVersion, items, head);
      throwIfAborted(signal);
      const expected = commit.expected === null ? '' : String(commit.expected);
      const args = [expected, String(commit.version), commit.head, String(commit.before), ...items];
      const reply = await storeCall(`${where}.commit`, () => run(scripts.commit, [keys.head, keys.items], args));
      if (reply === INCONSISTENT) {
        throw new Error(`${where}.commit: the stored items do not match the head's length (was a key evicted or edited?); nothing was written`);
      }
      return scriptFlag(`${where}.commit`, reply);
    },
    async items(from, limit, { signal } = {}) {
      itemRange(`${where}.items`, from, limit);
      if (limit === 0) return [];
      throwIfAborted(signal);
      const rows = await storeCall(`${where}.items`, () => run(scripts.items, [keys.items], [String(from), String(from + limit - 1)]));
      if (!Array.isArray(rows)) throw new Error(`${where}.items: the script replied ${typeof rows}, expected a list`);
      return rows.map(storedText);
    },
  };
}
