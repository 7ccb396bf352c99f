// ChatMemory over Redis: one list per session, one JSON text per message. A save replaces the
// list inside one Lua script, so a reader (another process included) sees the whole previous
// conversation or the whole new one, never a part of each.

import { messageFromRow, messageRows, storeCall, throwIfAborted } from '../common.mjs';

/** Values one RPUSH takes inside the script (Lua's `unpack` stops near 8000); REDIS_SCRIPT_PUSH_VALUES_MAX in limits.rs. */
export const PUSH_VALUES_MAX = 1_000;

export const MEMORY_SCRIPTS = Object.freeze({
  // KEYS[1] the message list. Returns every row in order (an empty list when none).
  load: "return redis.call('LRANGE', KEYS[1], 0, -1)",
  // KEYS[1] the message list; ARGV one JSON text per message. Returns the number written.
  save: `
redis.call('DEL', KEYS[1])
for i = 1, #ARGV, ${PUSH_VALUES_MAX} do
  redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + ${PUSH_VALUES_MAX - 1}, #ARGV)))
end
return #ARGV`,
});

/** `{ load({ signal }), save(messages, { signal }) }` of the list at `key`. */
export function redisChatMemory(run, key, scripts = MEMORY_SCRIPTS) {
  const where = 'turnkeep/redis memory';
  return {
    async load({ signal } = {}) {
      throwIfAborted(signal);
      const rows = await storeCall(`${where}.load`, () => run(scripts.load, [key], []));
      if (!Array.isArray(rows)) throw new Error(`${where}.load: the script replied ${typeof rows}, expected a list`);
      return rows.map((row, i) => messageFromRow(`${where}.load`, row, i));
    },
    async save(messages, { signal } = {}) {
      const rows = messageRows(`${where}.save`, messages);
      throwIfAborted(signal);
      const written = await storeCall(`${where}.save`, () => run(scripts.save, [key], rows));
      if (written !== rows.length) throw new Error(`${where}.save: the script replied ${JSON.stringify(written)}, expected ${rows.length}`);
    },
  };
}
