// The item store of a session log over Postgres (`createStoreSessionLog` runs on it; every
// append is decided in Rust, with the producer fencing of every other turnkeep log): a head row
// per session log with its `version` in a column of its own, and one row per item.
//
// A commit is ONE statement: the head row is inserted (first commit: `ON CONFLICT DO NOTHING`)
// or updated `WHERE version = $expected`, and the items are inserted from what that returned, so
// they are written exactly when the head moved. Postgres re-checks the WHERE clause on the newest
// row version after waiting for a concurrent writer's lock, so of racing commits with one
// expected version exactly one moves the head; the others write nothing and answer false.

import { itemRange, logCommit, storeCall, throwIfAborted } from '../common.mjs';
import { LOG_HEADS_TABLE, LOG_ITEMS_TABLE } from './schema.mjs';

/** Items of this commit at the positions after the head's old length. `moved` returns `length`. */
const INSERT_ITEMS = `written AS (
  INSERT INTO ${LOG_ITEMS_TABLE} (scope, session_id, position, item)
  SELECT $1, $2, moved.length - cardinality($6::text[]) + i.ordinality - 1, i.item
  FROM moved CROSS JOIN unnest($6::text[]) WITH ORDINALITY AS i(item, ordinality)
  RETURNING 1
)
SELECT (SELECT count(*) FROM moved) AS committed, (SELECT count(*) FROM written) AS written`;

/** The statements of a conformant store (a test swaps in a broken one to prove the suite trips). */
export const LOG_SQL = Object.freeze({
  // $1 scope, $2 session id.
  head: `SELECT head FROM ${LOG_HEADS_TABLE} WHERE scope = $1 AND session_id = $2`,
  // $1 scope, $2 session id, $3 new version, $4 new length, $5 head, $6 text[] items.
  create: `WITH moved AS (
  INSERT INTO ${LOG_HEADS_TABLE} (scope, session_id, version, length, head) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (scope, session_id) DO NOTHING
  RETURNING length
), ${INSERT_ITEMS}`,
  // The same, and $7 the expected version.
  update: `WITH moved AS (
  UPDATE ${LOG_HEADS_TABLE} SET version = $3, length = $4, head = $5, updated_at = now()
  WHERE scope = $1 AND session_id = $2 AND version = $7
  RETURNING length
), ${INSERT_ITEMS}`,
  // $1 scope, $2 session id, $3 first position, $4 how many.
  items: `SELECT position, item FROM ${LOG_ITEMS_TABLE}
WHERE scope = $1 AND session_id = $2 AND position >= $3
ORDER BY position LIMIT $4`,
});

/** `{ head, commit, items }` (the store interface of src/web/adapters/log_store.rs) over `query`. */
export function postgresLogStore(query, scope, sessionId, sql = LOG_SQL) {
  const where = 'turnkeep/postgres sessionLog';
  return {
    async head({ signal } = {}) {
      throwIfAborted(signal);
      const rows = await storeCall(`${where}.head`, () => query(sql.head, [scope, sessionId]));
      return rows[0]?.head ?? null;
    },
    async commit(expectedVersion, items, head, { signal } = {}) {
      const commit = logCommit(`${where}.commit`, expectedVersion, items, head);
      throwIfAborted(signal);
      // Versions and lengths travel as decimal text: exact whatever the client's int8 handling.
      const params = [scope, sessionId, String(commit.version), String(commit.length), commit.head, items];
      const rows = await storeCall(`${where}.commit`, () =>
        commit.expected === null ? query(sql.create, params) : query(sql.update, [...params, String(commit.expected)]),
      );
      const committed = Number(rows[0]?.committed);
      const written = Number(rows[0]?.written);
      if (committed === 0 && written === 0) return false;
      if (committed === 1 && written === items.length) return true;
      throw new Error(`${where}.commit: the statement answered ${JSON.stringify(rows[0])}, expected 0 or 1 head and ${items.length} items`);
    },
    async items(from, limit, { signal } = {}) {
      itemRange(`${where}.items`, from, limit);
      if (limit === 0) return [];
      throwIfAborted(signal);
      const rows = await storeCall(`${where}.items`, () => query(sql.items, [scope, sessionId, String(from), String(limit)]));
      // Positions must follow on from `from`: a missing row would shift every later offset.
      rows.forEach((row, i) => {
        if (Number(row.position) !== from + i) throw new Error(`${where}.items: position ${from + i} is missing from the stored log`);
      });
      return rows.map((row) => row.item);
    },
  };
}
