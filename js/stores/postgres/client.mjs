// How the adapters talk to whatever Postgres client the host hands over. Every adapter write is
// a single statement (atomic on its own, no transaction to manage), so a client needs only to
// run a parameterised statement and give its rows back.
//
// Shapes recognised, in this order:
// - postgres.js (porsager, `postgres(url)`): `sql.unsafe(text, params)` resolves to the rows.
// - node-postgres (`pg`: Pool, Client or a pool's client), or anything with the same
//   `query(text, params)` resolving to `{ rows }` (the documented minimal interface).

import { invalidConfig } from '../common.mjs';

/**
 * `{ query(text, params) => Promise<row[]>, script(text) => Promise<void> }` over `client`;
 * `script` sends several statements without parameters (a migration). Throws
 * (SERVER_INVALID_CONFIG) naming the accepted shapes.
 */
export function postgresClient(where, client) {
  if (isObject(client) && typeof client.unsafe === 'function') {
    return {
      query: async (text, params) => Array.from(await client.unsafe(text, params)),
      // Without parameters postgres.js uses the simple protocol, which allows several statements.
      script: async (text) => void (await client.unsafe(text)),
    };
  }
  if (isObject(client) && typeof client.query === 'function') {
    return {
      async query(text, params) {
        const result = await client.query(text, params);
        if (!Array.isArray(result?.rows)) throw new Error('query() resolved without a rows array');
        return result.rows;
      },
      // pg answers a several-statement text with one result per statement: nothing to read.
      script: async (text) => void (await client.query(text)),
    };
  }
  throw invalidConfig(where, 'client must be a pg Pool or Client, a postgres.js sql, or an object with query(text, params) resolving to { rows }');
}

function isObject(value) {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}
