// What the Redis and Postgres adapters share: option checks, reading the two fields a store
// needs from a snapshot (its key and its cursor), one JSON row per message, abort checks and
// error wrapping. No runtime imports, so the adapters run wherever their client runs (Node,
// workerd, other edge runtimes).
//
// The adapters store what the core gives them. They never judge an envelope: the session
// decoder in the core does that when the text is loaded again.

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

/** A key part chosen by the host (a prefix, a scope): a string, at most `charsMax` long. */
export function checkKeyPart(where, name, value, charsMax) {
  if (typeof value !== 'string' || value.length > charsMax) {
    throw invalidConfig(where, `${name} must be a string of at most ${charsMax} characters`);
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

/** One JSON text per message, in order: a row never holds more than one message. */
export function messageRows(where, messages) {
  if (!Array.isArray(messages)) throw new TypeError(`${where}: messages must be an array`);
  return messages.map((message) => JSON.stringify(message));
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
