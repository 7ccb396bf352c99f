// ChatMemory over Postgres: one row per message, plus a conversation row with the message
// count. A save is ONE statement (upsert the count, upsert the rows that changed, trim the
// rest), so it commits whole or not at all, and a load is one statement, so it reads one
// committed state: a reader never sees half of a save. Readers take only positions below the
// count, which keeps even two overlapping saves from mixing: the later commit wins whole. The
// conversation row also keeps the highest memory fence a save was made under, compared by the
// same statement.

import { fenceRefused, fenceText, messageFromRow, messageRows, storeCall, throwIfAborted } from '../common.mjs';
import { CONVERSATIONS_TABLE, MESSAGES_TABLE } from './schema.mjs';

export const MEMORY_SQL = Object.freeze({
  // $1 scope, $2 session id. No row: never saved. One row with a null position: saved empty.
  load: `SELECT c.message_count, m.position, m.message
FROM ${CONVERSATIONS_TABLE} c
LEFT JOIN ${MESSAGES_TABLE} m
  ON m.scope = c.scope AND m.session_id = c.session_id AND m.position < c.message_count
WHERE c.scope = $1 AND c.session_id = $2
ORDER BY m.position`,
  // $1 scope, $2 session id, $3 text[] of messages in order, $4 the save's memory fence (null:
  // none). Returns the count written; no row (nothing written) when a higher fence saved before
  // (src/core/session/fence.rs).
  save: `WITH conversation AS (
  INSERT INTO ${CONVERSATIONS_TABLE} (scope, session_id, message_count, fence)
  VALUES ($1, $2, cardinality($3::text[]), $4::bigint)
  ON CONFLICT (scope, session_id) DO UPDATE SET message_count = excluded.message_count,
    fence = COALESCE(excluded.fence, ${CONVERSATIONS_TABLE}.fence), updated_at = now()
  WHERE excluded.fence IS NULL OR ${CONVERSATIONS_TABLE}.fence IS NULL OR ${CONVERSATIONS_TABLE}.fence <= excluded.fence
  RETURNING message_count
), written AS (
  INSERT INTO ${MESSAGES_TABLE} (scope, session_id, position, message)
  SELECT $1, $2, (m.ordinality - 1)::integer, m.message
  FROM unnest($3::text[]) WITH ORDINALITY AS m(message, ordinality)
  WHERE EXISTS (SELECT 1 FROM conversation)
  ON CONFLICT (scope, session_id, position) DO UPDATE SET message = excluded.message
  WHERE ${MESSAGES_TABLE}.message IS DISTINCT FROM excluded.message
  RETURNING 1
), trimmed AS (
  DELETE FROM ${MESSAGES_TABLE}
  WHERE scope = $1 AND session_id = $2 AND position >= cardinality($3::text[])
    AND EXISTS (SELECT 1 FROM conversation)
  RETURNING 1
)
SELECT message_count FROM conversation`,
});

/** `{ load({ signal }), save(messages, { signal, fence }) }` of one session's rows. */
export function postgresChatMemory(query, scope, sessionId, sql = MEMORY_SQL) {
  const where = 'turnkeep/postgres memory';
  return {
    async load({ signal } = {}) {
      throwIfAborted(signal);
      const rows = await storeCall(`${where}.load`, () => query(sql.load, [scope, sessionId]));
      return conversationFromRows(`${where}.load`, rows);
    },
    async save(messages, { signal, fence } = {}) {
      const texts = messageRows(`${where}.save`, messages);
      const fenceArg = fenceText(`${where}.save`, fence) || null;
      throwIfAborted(signal);
      const rows = await storeCall(`${where}.save`, () => query(sql.save, [scope, sessionId, texts, fenceArg]));
      if (rows.length === 0) throw fenceRefused(`${where}.save`, fence);
      const written = Number(rows[0]?.message_count);
      if (written !== texts.length) throw new Error(`${where}.save: wrote ${rows[0]?.message_count} messages, expected ${texts.length}`);
    },
  };
}

/** The messages of the load rows, checked to be exactly positions 0..count-1. */
function conversationFromRows(where, rows) {
  if (rows.length === 0) return [];
  const count = Number(rows[0].message_count);
  const present = rows.filter((row) => row.position !== null && row.position !== undefined);
  if (present.length !== count || present.some((row, i) => Number(row.position) !== i)) {
    throw new Error(`${where}: the stored conversation lists ${count} messages but ${present.length} rows were found`);
  }
  return present.map((row, i) => messageFromRow(where, row.message, i));
}
