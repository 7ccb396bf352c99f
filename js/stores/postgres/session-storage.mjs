// SessionStorage over Postgres: one row per session. The first save is an INSERT that does
// nothing on conflict; every later save is an UPDATE whose WHERE clause holds the expected
// cursor. Postgres re-checks that clause on the newest row version after waiting for a
// concurrent writer's lock, so of any number of racing saves exactly one changes the row.

import { checkSessionId, expectedCursor, sessionRecord, storeCall, throwIfAborted } from '../common.mjs';
import { SESSIONS_TABLE } from './schema.mjs';

/** The statements of a conformant store (a test swaps in broken ones to prove the suite trips). */
export const SESSION_SQL = Object.freeze({
  // $1 scope, $2 session id.
  load: `SELECT envelope FROM ${SESSIONS_TABLE} WHERE scope = $1 AND session_id = $2`,
  // $1 scope, $2 session id, $3 cursor, $4 envelope. A row back means written.
  create: `INSERT INTO ${SESSIONS_TABLE} (scope, session_id, cursor, envelope) VALUES ($1, $2, $3, $4)
ON CONFLICT (scope, session_id) DO NOTHING RETURNING cursor`,
  // $1 scope, $2 session id, $3 new cursor, $4 envelope, $5 expected cursor.
  update: `UPDATE ${SESSIONS_TABLE} SET cursor = $3, envelope = $4, updated_at = now()
WHERE scope = $1 AND session_id = $2 AND cursor = $5 RETURNING cursor`,
  delete: `DELETE FROM ${SESSIONS_TABLE} WHERE scope = $1 AND session_id = $2 RETURNING cursor`,
});

/** `{ load, save, delete }` over `query` (see client.mjs), rows keyed by `(scope, sessionId)`. */
export function postgresSessionStorage(query, scope, sql = SESSION_SQL) {
  const where = 'turnkeep/postgres sessionStorage';
  return {
    async load(sessionId, signal) {
      checkSessionId(`${where}.load`, sessionId);
      throwIfAborted(signal);
      const rows = await storeCall(`${where}.load`, () => query(sql.load, [scope, sessionId]));
      return rows[0]?.envelope ?? undefined;
    },
    async save(snapshot, expected, signal) {
      const { sessionId, cursor, text } = sessionRecord(`${where}.save`, snapshot);
      const after = expectedCursor(`${where}.save`, expected);
      throwIfAborted(signal);
      // Cursors travel as decimal text: exact for every safe integer, whatever the client's int8 handling.
      const rows = await storeCall(`${where}.save`, () =>
        after === undefined
          ? query(sql.create, [scope, sessionId, String(cursor), text])
          : query(sql.update, [scope, sessionId, String(cursor), text, String(after)]),
      );
      return rows.length === 1;
    },
    async delete(sessionId, signal) {
      checkSessionId(`${where}.delete`, sessionId);
      throwIfAborted(signal);
      const rows = await storeCall(`${where}.delete`, () => query(sql.delete, [scope, sessionId]));
      return rows.length === 1;
    },
  };
}
