// defineChat and the model factories (README.md, "Models"). Plain JS on purpose: a definition is checked
// when the host builds it (at module load, typically), so a bad config fails at deploy time with
// `code: 'SERVER_INVALID_CONFIG'` instead of on the first turn. The wasm side checks the same
// rules again when a handler resolves the definition (src/web/adapters), since a host may
// hand-build these objects.
//
// Limits mirror src/core/limits.rs (TOOL_NAME_CHARS_MAX, TOOLS_PER_CHAT_MAX, ...).

export const DEMO_MODEL_KIND = 'turnkeep.demo';
export const OPENAI_COMPATIBLE_MODEL_KIND = 'turnkeep.openai-compatible';

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const TOOL_DESCRIPTION_CHARS_MAX = 4_096;
const TOOLS_PER_CHAT_MAX = 128;
const TOOL_ITERATIONS_MAX = 50;
const TOOL_ITERATIONS_MAX_DEFAULT = 5;
const DEMO_CHUNK_DELAY_MS_DEFAULT = 20;
const DEMO_CHUNK_DELAY_MS_MAX = 60_000;
const MODEL_BASE_URL_CHARS_MAX = 2_048;
const MODEL_NAME_CHARS_MAX = 256;
const MODEL_API_KEY_CHARS_MAX = 4_096;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/**
 * A chat definition: what `resolveDefinition(context)` returns to `createChatHandler`.
 * @returns a frozen `{ id, revision, model, memory, tools, maxToolIterations, initialMessages,
 *   conversation? }` (`conversation`, a statechart, is checked where it is used, in Rust)
 * @throws Error with `code: 'SERVER_INVALID_CONFIG'` naming the first bad field
 */
export function defineChat(options) {
  const where = 'defineChat';
  if (!isObject(options)) invalid(where, 'options must be an object');
  const { id, revision, model, memory, tools = [], maxToolIterations = TOOL_ITERATIONS_MAX_DEFAULT, initialMessages = [], conversation } = options;
  if (typeof id !== 'string' || !SAFE_ID.test(id)) invalid(where, 'id must be a SafeId (1 to 128 of A-Z a-z 0-9 . _ : -, starting alphanumeric)');
  if (!Number.isSafeInteger(revision) || revision < 1) invalid(where, 'revision must be a positive safe integer');
  checkModel(where, model);
  if (!isObject(memory) || typeof memory.load !== 'function' || typeof memory.save !== 'function') {
    invalid(where, 'memory must be an object with load() and save() (e.g. createMemoryChatMemory())');
  }
  const checkedTools = checkTools(where, tools);
  if (!Number.isSafeInteger(maxToolIterations) || maxToolIterations < 0 || maxToolIterations > TOOL_ITERATIONS_MAX) {
    invalid(where, `maxToolIterations must be an integer from 0 to ${TOOL_ITERATIONS_MAX}`);
  }
  if (!Array.isArray(initialMessages)) invalid(where, 'initialMessages must be an array of messages');
  if (conversation !== undefined && !isObject(conversation)) invalid(where, 'conversation must be a statechart object when given');
  return Object.freeze({
    id,
    revision,
    model,
    memory,
    tools: checkedTools,
    maxToolIterations,
    initialMessages: Object.freeze([...initialMessages]),
    ...(conversation === undefined ? {} : { conversation }),
  });
}

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

function checkModel(where, model) {
  if (!isObject(model)) invalid(where, 'model must be createDemoModel(), createOpenAICompatibleModel(), an object with stream() or an AgentsKit adapter');
  if (model.kind === DEMO_MODEL_KIND) {
    createDemoModel({ chunkDelayMs: model.chunkDelayMs }); // re-check a hand-built descriptor
  } else if (model.kind === OPENAI_COMPATIBLE_MODEL_KIND) {
    createOpenAICompatibleModel(model);
  } else if (typeof model.kind === 'string' && model.kind.startsWith('turnkeep.')) {
    invalid(where, `model.kind ${JSON.stringify(model.kind)} is not a model this version knows`);
  } else if (typeof model.stream !== 'function' && typeof model.createSource !== 'function') {
    invalid(where, 'model must be createDemoModel(), createOpenAICompatibleModel(), an object with stream(request, { signal }) or an AgentsKit adapter (createSource)');
  }
}

function checkTools(where, tools) {
  if (!Array.isArray(tools)) invalid(where, 'tools must be an array');
  if (tools.length > TOOLS_PER_CHAT_MAX) invalid(where, `at most ${TOOLS_PER_CHAT_MAX} tools are allowed`);
  const names = new Set();
  tools.forEach((tool, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) invalid(where, `${at} must be an object`);
    if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) invalid(where, `${at}.name must be 1 to 64 of A-Z a-z 0-9 _ -`);
    if (names.has(tool.name)) invalid(where, `${at}.name ${JSON.stringify(tool.name)} is used by another tool`);
    names.add(tool.name);
    if (typeof tool.description !== 'string' || tool.description.length > TOOL_DESCRIPTION_CHARS_MAX) {
      invalid(where, `${at}.description must be a string of at most ${TOOL_DESCRIPTION_CHARS_MAX} characters`);
    }
    if (!isObject(tool.parameters) || Array.isArray(tool.parameters)) invalid(where, `${at}.parameters must be a JSON Schema object`);
    if (tool.requiresConfirmation !== undefined && typeof tool.requiresConfirmation !== 'boolean') {
      invalid(where, `${at}.requiresConfirmation must be a boolean when given`);
    }
    if (typeof tool.execute !== 'function') invalid(where, `${at}.execute must be a function (args, { signal, toolCallId, idempotencyKey? })`);
  });
  return Object.freeze([...tools]);
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
