// What the Redis and Postgres adapters share: option checks, reading the two fields a store
// needs from a snapshot (its key and its cursor), one JSON row per message, abort checks and
// error wrapping. No runtime imports, so the adapters run wherever their client runs (Node,
// workerd, other edge runtimes).
//
// The adapters store what the core gives them. They never judge an envelope: the session
// decoder in the core does that when the text is loaded again.

// Bounds, mirrored from src/core/limits.rs (tests/stores/adapter-inputs.test.mjs compares them).
/** A stored session envelope's JSON text (the Durable Object store's bound too). */
export const STORE_SESSION_JSON_BYTES_MAX = 16_777_216;
/** All of one session's saved messages as JSON text (the Durable Object store's bound too). */
export const STORE_MESSAGES_JSON_BYTES_MAX = 33_554_432;
/** A Redis key prefix or a Postgres scope; a longer one is almost certainly a mistake. */
export const STORE_KEY_PART_CHARS_MAX = 256;
/**
 * The items of one session-log commit as JSON text: room for one MESSAGES_SNAPSHOT of a whole
 * conversation (it carries the messages twice, as TanStack UI and canonical messages).
 */
export const STORE_LOG_COMMIT_JSON_BYTES_MAX = 67_108_864;

/**
 * An options error, thrown when a store is created (at module load, typically), with the same
 * `code` as defineChat's so a host handles every bad config alike.
 */
export function invalidConfig(where, message) {
  const error = new Error(`${where}: ${message}`);
  error.code = 'SERVER_INVALID_CONFIG';
  return error;
}

/** `options` must be an object; returns it. */
export function checkOptions(where, options) {
  if (typeof options !== 'object' || options === null) throw invalidConfig(where, 'options must be an object');
  return options;
}

/** A key part chosen by the host (a prefix, a scope): a string of at most STORE_KEY_PART_CHARS_MAX. */
export function checkKeyPart(where, name, value) {
  if (typeof value !== 'string' || value.length > STORE_KEY_PART_CHARS_MAX) {
    throw invalidConfig(where, `${name} must be a string of at most ${STORE_KEY_PART_CHARS_MAX} characters`);
  }
  return value;
}

/** The session a chat memory is created for (a creation-time option, so a config error). */
export function checkSessionOption(where, sessionId) {
  if (typeof sessionId !== 'string' || sessionId.length === 0) throw invalidConfig(where, 'sessionId must be a non-empty string');
  return sessionId;
}

/** A session id a store is keyed by: a non-empty string (the core hands only SafeIds). */
export function checkSessionId(where, sessionId) {
  if (typeof sessionId !== 'string' || sessionId.length === 0) {
    throw new TypeError(`${where}: sessionId must be a non-empty string`);
  }
  return sessionId;
}

/**
 * The stored form of a snapshot the core produced: its key, its cursor (the store compares
 * the next save against it) and its JSON text (stored as is; a text snapshot is kept verbatim).
 */
export function sessionRecord(where, snapshot) {
  const text = typeof snapshot === 'string' ? snapshot : JSON.stringify(snapshot);
  const value = typeof snapshot === 'string' ? parseJson(where, snapshot) : snapshot;
  const sessionId = value?.sessionId;
  const cursor = value?.cursor;
  checkSessionId(where, sessionId);
  if (!isCursor(cursor)) throw new TypeError(`${where}: the snapshot's cursor must be a non-negative safe integer`);
  checkBytes(where, 'the session envelope', utf8Bytes(text), STORE_SESSION_JSON_BYTES_MAX);
  return { sessionId, cursor, text };
}

/** `undefined` (create only if absent) or a cursor; `null` counts as `undefined`. */
export function expectedCursor(where, value) {
  if (value === undefined || value === null) return undefined;
  if (!isCursor(value)) throw new TypeError(`${where}: expectedCursor must be undefined or a non-negative safe integer`);
  return value;
}

function isCursor(value) {
  return Number.isSafeInteger(value) && value >= 0;
}

/**
 * A save's memory fence as the store's scripts take it: `''` for none (`undefined`/`null`), else
 * the fence's decimal text; anything else is a TypeError.
 */
export function fenceText(where, fence) {
  if (fence === undefined || fence === null) return '';
  if (!isCursor(fence)) throw new TypeError(`${where}: fence must be a non-negative safe integer when given`);
  return String(fence);
}

/** The error of a save its store refused because a save under a higher fence came first. */
export function fenceRefused(where, fence) {
  return new Error(`${where}: refused, a newer turn saved this conversation (this save's fence is ${fence})`);
}

/** One JSON text per message, in order: a row never holds more than one message. */
export function messageRows(where, messages) {
  if (!Array.isArray(messages)) throw new TypeError(`${where}: messages must be an array`);
  const rows = messages.map((message) => JSON.stringify(message));
  checkBytes(where, 'the messages', rows.reduce((sum, row) => sum + utf8Bytes(row), 0), STORE_MESSAGES_JSON_BYTES_MAX);
  return rows;
}

/**
 * What a session-log store needs of a commit (see src/web/adapters/log_store.rs): the expected
 * version (`null`: no head yet), the item texts, and of the new head's JSON text only its
 * `version` and `length` (the store compares the first and checks its item count against the
 * second). The head is stored verbatim; fencing was decided in Rust, never here.
 */
export function logCommit(where, expectedVersion, items, head) {
  if (expectedVersion !== null && expectedVersion !== undefined && !isCursor(expectedVersion)) {
    throw new TypeError(`${where}: expectedVersion must be null or a non-negative safe integer`);
  }
  if (!Array.isArray(items) || items.some((item) => typeof item !== 'string')) {
    throw new TypeError(`${where}: items must be an array of JSON texts`);
  }
  const value = typeof head === 'string' ? parseJsonOr(head) : undefined;
  if (!isCursor(value?.version) || !isCursor(value?.length) || value.length < items.length) {
    throw new TypeError(`${where}: head must be the JSON text of a log head with a version and a length of at least the items`);
  }
  checkBytes(where, 'the items', items.reduce((sum, item) => sum + utf8Bytes(item), 0), STORE_LOG_COMMIT_JSON_BYTES_MAX);
  return { expected: expectedVersion ?? null, version: value.version, length: value.length, before: value.length - items.length, head };
}

/** `from` and `limit` of an item read: non-negative safe integers. */
export function itemRange(where, from, limit) {
  if (!isCursor(from) || !isCursor(limit)) throw new TypeError(`${where}: from and limit must be non-negative safe integers`);
  return { from, limit };
}

/**
 * A stored head or item back as JSON text. A client that decodes JSON itself (Upstash's does by
 * default) hands the value: it is encoded again, which gives an equal JSON text.
 */
export function storedText(value) {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function parseJsonOr(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A save over a bound is refused whole (an error, not a conflict): nothing is sent. */
function checkBytes(where, what, bytes, max) {
  if (bytes > max) throw new RangeError(`${where}: ${what} take ${bytes} bytes of JSON, more than the ${max} a store keeps`);
}

/** UTF-8 length of `text`, counted without encoding it (a surrogate pair counts 2 + 2). */
export function utf8Bytes(text) {
  let bytes = text.length;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0x80) bytes += unit >= 0x800 && (unit < 0xd800 || unit > 0xdfff) ? 2 : 1;
  }
  return bytes;
}

/**
 * A stored message row back as a value. A client that decodes JSON itself (Upstash's does by
 * default) hands objects; text is parsed here. A row that is not JSON is an error: a
 * conversation is read whole or not at all.
 */
export function messageFromRow(where, row, position) {
  if (typeof row !== 'string') return row;
  try {
    return JSON.parse(row);
  } catch {
    throw new Error(`${where}: the stored message at position ${position} is not JSON`);
  }
}

function parseJson(where, text) {
  try {
    return JSON.parse(text);
  } catch {
    throw new TypeError(`${where}: a text snapshot must be JSON`);
  }
}

/** Throws the signal's reason when it has fired: no new command is sent after an abort. */
export function throwIfAborted(signal) {
  if (signal && typeof signal.throwIfAborted === 'function') signal.throwIfAborted();
}

/** Runs `call`; a failure of the client becomes an Error naming the store, with the cause kept. */
export async function storeCall(where, call) {
  try {
    return await call();
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new Error(`${where}: ${detail}`, { cause });
  }
}
