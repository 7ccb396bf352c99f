// One way to run a Lua script on whatever Redis client the host hands over. Every adapter
// command is a script over a single key (atomic on the server, and valid on Redis Cluster), so
// `eval(script, keys, args)` is all a client must offer.
//
// Shapes recognised, in this order:
// - ioredis (`Redis`, `Cluster`): `eval(script, numKeys, ...keys, ...args)`; told apart by
//   `defineCommand` and `call`, which node-redis and HTTP clients lack.
// - node-redis v4 / v5 (`createClient`, `createCluster`): `eval(script, { keys, arguments })`;
//   told apart by `sendCommand`.
// - anything else with `eval(script, keys, args)`: the documented minimal interface, which is
//   exactly the signature of Upstash's HTTP client (`@upstash/redis`), usable on edge runtimes.

import { invalidConfig } from '../common.mjs';

/**
 * `(script, keys, args) => Promise<reply>` over `client`; throws (SERVER_INVALID_CONFIG) naming
 * the accepted shapes. `args` are strings.
 */
export function redisEval(where, client) {
  if (isObject(client) && typeof client.eval === 'function') {
    if (typeof client.defineCommand === 'function' && typeof client.call === 'function') {
      return (script, keys, args) => client.eval(script, keys.length, ...keys, ...args);
    }
    if (typeof client.sendCommand === 'function') {
      return (script, keys, args) => client.eval(script, { keys, arguments: args });
    }
    return (script, keys, args) => client.eval(script, keys, args);
  }
  throw invalidConfig(
    where,
    'client must be a node-redis client, an ioredis client, or an object with eval(script, keys, args) (e.g. @upstash/redis)',
  );
}

function isObject(value) {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}
