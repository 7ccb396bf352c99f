// The model factories (README.md, "Models"). Plain JS on purpose: `turnkeep/ask` shares them
// without the chat server's wasm, and a descriptor is checked when the host builds it (at module
// load, typically), so a bad config fails at deploy time with `code: 'SERVER_INVALID_CONFIG'`
// instead of on the first turn. The wasm side checks the same rules again when a handler reads
// the descriptor (src/web/adapters/models/descriptor.rs), since a host may hand-build one.
// `defineChat` is define.mjs (the one definition reader, in Rust).
//
// Limits mirror src/core/limits.rs (DEMO_CHUNK_DELAY_MS_MAX, MODEL_*_CHARS_MAX).

export const DEMO_MODEL_KIND = 'turnkeep.demo';
export const OPENAI_COMPATIBLE_MODEL_KIND = 'turnkeep.openai-compatible';

const DEMO_CHUNK_DELAY_MS_DEFAULT = 20;
const DEMO_CHUNK_DELAY_MS_MAX = 60_000;
const MODEL_BASE_URL_CHARS_MAX = 2_048;
const MODEL_NAME_CHARS_MAX = 256;
const MODEL_API_KEY_CHARS_MAX = 4_096;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/**
 * The deterministic demo model (its scripts: src/core/chat/demo.rs): no network, `chunkDelayMs` between chunks.
 * @param {{ chunkDelayMs?: number }} [options] default 20, at most 60000
 */
export function createDemoModel(options = {}) {
  const where = 'createDemoModel';
  if (!isObject(options)) invalid(where, 'options must be an object');
  const { chunkDelayMs = DEMO_CHUNK_DELAY_MS_DEFAULT } = options;
  if (!Number.isSafeInteger(chunkDelayMs) || chunkDelayMs < 0 || chunkDelayMs > DEMO_CHUNK_DELAY_MS_MAX) {
    invalid(where, `chunkDelayMs must be an integer from 0 to ${DEMO_CHUNK_DELAY_MS_MAX}`);
  }
  return Object.freeze({ kind: DEMO_MODEL_KIND, chunkDelayMs });
}

/**
 * A model behind an OpenAI-compatible streaming endpoint: `POST {baseUrl}/chat/completions`.
 * The key is kept as a non-enumerable property, so logging or JSON-serialising the descriptor
 * (or a definition holding it) does not print it.
 * @param {{ baseUrl: string, apiKey?: string, model: string, includeUsage?: boolean }} options
 *   includeUsage asks for a usage chunk (`stream_options.include_usage`), off by default
 *   because some compatible servers reject unknown fields.
 */
export function createOpenAICompatibleModel(options) {
  const where = 'createOpenAICompatibleModel';
  if (!isObject(options)) invalid(where, 'options must be an object');
  const { baseUrl, apiKey, model, includeUsage = false } = options;
  if (typeof baseUrl !== 'string' || baseUrl.length > MODEL_BASE_URL_CHARS_MAX || !isHttpUrl(baseUrl)) {
    invalid(where, `baseUrl must be an http(s) URL of at most ${MODEL_BASE_URL_CHARS_MAX} characters`);
  }
  if (typeof model !== 'string' || model.length === 0 || model.length > MODEL_NAME_CHARS_MAX) {
    invalid(where, `model must be a non-empty string of at most ${MODEL_NAME_CHARS_MAX} characters`);
  }
  if (apiKey !== undefined && (typeof apiKey !== 'string' || apiKey.length > MODEL_API_KEY_CHARS_MAX || !PRINTABLE_ASCII.test(apiKey))) {
    invalid(where, `apiKey must be 1 to ${MODEL_API_KEY_CHARS_MAX} printable ASCII characters when given`);
  }
  if (typeof includeUsage !== 'boolean') invalid(where, 'includeUsage must be a boolean when given');
  const descriptor = { kind: OPENAI_COMPATIBLE_MODEL_KIND, baseUrl: baseUrl.replace(/\/+$/, ''), model, includeUsage };
  if (apiKey !== undefined) Object.defineProperty(descriptor, 'apiKey', { value: apiKey, enumerable: false });
  return Object.freeze(descriptor);
}

function isObject(value) {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}

function isHttpUrl(text) {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !/\s/.test(text);
  } catch {
    return false;
  }
}

function invalid(where, message) {
  const error = new Error(`${where}: ${message}`);
  error.code = 'SERVER_INVALID_CONFIG';
  throw error;
}
