// ChatMemory over Redis: one list per session, one JSON text per message. A save replaces the
// list inside one Lua script, so a reader (another process included) sees the whole previous
// conversation or the whole new one, never a part of each; the same script compares the save's
// memory fence with the highest one saved under.

import { fenceRefused, fenceText, messageFromRow, messageRows, storeCall, throwIfAborted } from '../common.mjs';

/** Values one RPUSH takes inside the script (Lua's `unpack` stops near 8000); REDIS_SCRIPT_PUSH_VALUES_MAX in limits.rs. */
export const PUSH_VALUES_MAX = 1_000;

export const MEMORY_SCRIPTS = Object.freeze({
  // KEYS[1] the message list. Returns every row in order (an empty list when none).
  load: "return redis.call('LRANGE', KEYS[1], 0, -1)",
  // KEYS[1] the message list, KEYS[2] the highest memory fence saved under; ARGV[1] this
  // save's fence ('' for none), then one JSON text per message. Returns the number written, or
  // -1 (nothing written) when a higher fence saved before (src/core/session/fence.rs).
  save: `
local fence = ARGV[1]
if fence ~= '' then
  local stored = redis.call('GET', KEYS[2])
  if stored and tonumber(stored) > tonumber(fence) then return -1 end
  redis.call('SET', KEYS[2], fence)
end
redis.call('DEL', KEYS[1])
for i = 2, #ARGV, ${PUSH_VALUES_MAX} do
  redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + ${PUSH_VALUES_MAX - 1}, #ARGV)))
end
return #ARGV - 1`,
});

/**
 * `{ load({ signal }), save(messages, { signal, fence }) }` of the list at `keys.messages`, its
 * memory fence at `keys.fence` (the same hash slot).
 */
export function redisChatMemory(run, keys, scripts = MEMORY_SCRIPTS) {
  const where = 'turnkeep/redis memory';
  return {
    async load({ signal } = {}) {
      throwIfAborted(signal);
      const rows = await storeCall(`${where}.load`, () => run(scripts.load, [keys.messages], []));
      if (!Array.isArray(rows)) throw new Error(`${where}.load: the script replied ${typeof rows}, expected a list`);
      return rows.map((row, i) => messageFromRow(`${where}.load`, row, i));
    },
    async save(messages, { signal, fence } = {}) {
      const rows = messageRows(`${where}.save`, messages);
      const fenceArg = fenceText(`${where}.save`, fence);
      throwIfAborted(signal);
      const written = await storeCall(`${where}.save`, () => run(scripts.save, [keys.messages, keys.fence], [fenceArg, ...rows]));
      if (written === -1) throw fenceRefused(`${where}.save`, fence);
      if (written !== rows.length) throw new Error(`${where}.save: the script replied ${JSON.stringify(written)}, expected ${rows.length}`);
    },
  };
}
