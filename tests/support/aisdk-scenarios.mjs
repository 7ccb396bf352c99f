// AI SDK language models driving turnkeep turns, as scenarios that run unchanged in Node
// (tests/js/aisdk-models.test.mjs) and in workerd (tests/workerd/aisdk-models.test.mjs, bundled
// into a Worker). Each scenario runs one or two turns through `createChatHandler` and returns
// plain JSON facts; tests/support/aisdk-checks.mjs holds what they must be.
//
// The models are the real ones: `ai/test`'s MockLanguageModelV3 / V4, and the unchanged
// `@ai-sdk/anthropic`, `@ai-sdk/openai` (Responses and chat completions),
// `@ai-sdk/openai-compatible` and `workers-ai-provider` provider packages. The providers talk to a local fixture server
// (tests/support/aisdk-fixture-server.mjs) replaying recorded streaming responses; Workers AI
// talks to a stand-in `env.AI` binding (tests/support/workers-ai-standin.mjs), since its service
// cannot be reached here. `ai@7.0.173` ships no MockLanguageModelV2: the V2 scenario uses a
// hand-written V2 model object, which says so in its `provider` field.
//
// `env`: { pkg (turnkeep's exports), mocks (ai/test), createAnthropic, createOpenAI,
// createOpenAICompatible, createWorkersAI, z (zod), fixtureUrl, workersAiFixtures: { toolCall,
// text } }; the real-model scenarios (`realText`, `realTool`: not in SCENARIO_NAMES, run by
// scripts/real-model.sh) also `realUrl` and `realModel`.

const SECRET = 'SECRET-4711';

const LOOKUP_PARAMETERS = {
  type: 'object',
  properties: { query: { type: 'string' } },
  required: ['query'],
  additionalProperties: false,
};

/** The lookup tool; `runs` records what it was run with. */
function lookupTool(runs, parameters = LOOKUP_PARAMETERS) {
  return {
    name: 'lookup',
    description: 'Looks a thing up.',
    parameters,
    execute: async (args) => {
      runs.push(args);
      return `result for ${args.query}`;
    },
  };
}

const INITIAL = [
  {
    id: 'u0', role: 'user', content: 'What is in this picture?', status: 'complete', createdAt: '2026-07-11T03:00:00.000Z',
    parts: [
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image', source: 'data:image/png;base64,iVBORw0KGgo=', mimeType: 'image/png' },
    ],
  },
  { id: 'a0', role: 'assistant', content: 'A cat.', status: 'complete', createdAt: '2026-07-11T03:00:01.000Z' },
];

const SETTINGS = {
  instructions: 'Be brief.',
  temperature: 0.3,
  maxOutputTokens: 128,
  topP: 0.9,
  stopSequences: ['END'],
  providerOptions: { mock: { seed: 7 } },
};

/** One POST /api/chat to `handler`; the NDJSON lines parsed. */
async function turn(handler, { sessionId = 's1', turnId = 't1', input = 'hello' } = {}) {
  const body = {
    protocol: 'agentskit.chat.turn', version: 1, eventId: `e-${turnId}`, sessionId, turnId, sequence: 0,
    emittedAt: '2026-07-11T03:00:00.000Z', event: 'client.turn.submit', payload: { input },
  };
  const response = await handler(new Request('http://127.0.0.1/api/chat', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  }));
  const text = await response.text();
  const lines = text.trimEnd().split('\n').filter(Boolean).map((line) => JSON.parse(line));
  return { status: response.status, text, lines, last: lines.at(-1) };
}

/** A handler over `definition` with in-memory storage and log, recording what `onError` got. */
function harness(pkg, definition) {
  const storage = pkg.createMemorySessionStorage();
  const log = pkg.createMemorySessionLog();
  const faults = [];
  const handler = pkg.createChatHandler({
    resolveDefinition: () => definition,
    sessionStorage: () => storage,
    sessionLog: () => log,
    onError: (error, info) => faults.push({ stage: info?.stage, isError: error instanceof Error, message: String(error?.message ?? error) }),
  });
  return { handler, storage, log, faults };
}

/** The log's chunks, read whole. */
async function logChunks(log) {
  const { chunks } = await log.read({});
  return chunks.map((c) => (typeof c === 'string' ? JSON.parse(c) : c));
}

/** The options a model's `doStream` got, as JSON facts (URLs and signals named by their kind). */
function callFacts(options) {
  return JSON.parse(JSON.stringify(options, (key, value) => {
    if (value instanceof URL) return { url: value.href };
    if (key === 'abortSignal') return value instanceof AbortSignal ? 'AbortSignal' : typeof value;
    return value;
  }));
}

const streamOf = (mocks, parts) => ({ stream: mocks.convertArrayToReadableStream(parts) });

const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const finish = (unified, input, output) => ({ type: 'finish', finishReason: { unified, raw: unified }, usage: usage(input, output) });

const TEXT_PARTS = [
  { type: 'stream-start', warnings: [] },
  { type: 'response-metadata', id: 'resp-1', timestamp: new Date(0), modelId: 'mock-model-id' },
  { type: 'reasoning-start', id: 'r1' },
  { type: 'reasoning-delta', id: 'r1', delta: 'Think ' },
  { type: 'reasoning-delta', id: 'r1', delta: 'first.' },
  { type: 'reasoning-end', id: 'r1' },
  { type: 'text-start', id: 't1' },
  { type: 'text-delta', id: 't1', delta: 'Hello ' },
  { type: 'text-delta', id: 't1', delta: 'there' },
  { type: 'text-end', id: 't1' },
  finish('stop', 7, 3),
];

const TOOL_PARTS = (input) => [
  { type: 'stream-start', warnings: [] },
  { type: 'tool-input-start', id: 'c1', toolName: 'lookup' },
  { type: 'tool-input-delta', id: 'c1', delta: input.slice(0, 5) },
  { type: 'tool-input-delta', id: 'c1', delta: input.slice(5) },
  { type: 'tool-input-end', id: 'c1' },
  { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input },
  finish('tool-calls', 5, 4),
];

const ANSWER_PARTS = (text) => [
  { type: 'text-start', id: 't2' },
  { type: 'text-delta', id: 't2', delta: text },
  { type: 'text-end', id: 't2' },
  finish('stop', 9, 2),
];

/** The mock class of `version` ('v3' or 'v4'). */
const mockClass = (mocks, version) => (version === 'v3' ? mocks.MockLanguageModelV3 : mocks.MockLanguageModelV4);

const conversation = (payload) => payload.messages.map((m) => ({
  role: m.role, content: m.content, status: m.status,
  ...(m.metadata?.reasoning ? { reasoning: m.metadata.reasoning } : {}),
  ...(m.toolCalls ? { toolCalls: m.toolCalls.map((c) => ({ name: c.name, args: c.args, status: c.status, result: c.result, error: c.error })) } : {}),
}));

export const SCENARIOS = {
  /** Text and reasoning, usage, the settings, the instructions and a file part (V3 or V4 mock). */
  async mockText(env, version) {
    const { pkg, mocks } = env;
    const model = new (mockClass(mocks, version))({ doStream: [streamOf(mocks, TEXT_PARTS)] });
    const definition = pkg.defineChat({
      id: 'mock', revision: 1, model, memory: pkg.createMemoryChatMemory(), initialMessages: INITIAL, ...SETTINGS,
    });
    const h = harness(pkg, definition);
    const result = await turn(h.handler, { input: 'And now?' });
    const chunks = await logChunks(h.log);
    const snapshot = await pkg.resolveChatSnapshot({ target: h.log });
    return {
      specificationVersion: model.specificationVersion,
      status: result.status,
      final: { status: result.last.payload.status, usage: result.last.payload.usage, conversation: conversation(result.last.payload) },
      calls: model.doStreamCalls.map(callFacts),
      chunks,
      projected: conversation(snapshot),
      renderParts: snapshot.renderParts.filter((p) => p.messageId === snapshot.messages.at(-1).id),
      html: pkg.renderChatHtml(snapshot.renderParts),
    };
  },

  /** A tool call runs the host tool once; its result reaches the second call beside the call. */
  async mockTool(env, version) {
    const { pkg, mocks } = env;
    const runs = [];
    const model = new (mockClass(mocks, version))({
      doStream: [streamOf(mocks, TOOL_PARTS('{"query":"cats"}')), streamOf(mocks, ANSWER_PARTS('found it'))],
    });
    const definition = pkg.defineChat({ id: 'mock-tool', revision: 1, model, memory: pkg.createMemoryChatMemory(), tools: [lookupTool(runs)] });
    const result = await turn(harness(pkg, definition).handler, { input: 'find cats' });
    return {
      runs,
      final: { status: result.last.payload.status, usage: result.last.payload.usage, conversation: conversation(result.last.payload) },
      calls: model.doStreamCalls.map(callFacts),
    };
  },

  /** An erroring stream: a versioned diagnostic, the cause for the operator, a released lease. */
  async mockError(env, version) {
    const { pkg, mocks } = env;
    // Call 0 fails mid-stream; call 1 (the next turn of the same session) answers.
    const model = new (mockClass(mocks, version))({
      doStream: [
        streamOf(mocks, [
          { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Par' },
          { type: 'error', error: new Error(`upstream ${SECRET}`) },
        ]),
        streamOf(mocks, ANSWER_PARTS('ok')),
      ],
    });
    const definition = pkg.defineChat({ id: 'mock-error', revision: 1, model, memory: pkg.createMemoryChatMemory() });
    const h = harness(pkg, definition);
    const first = await turn(h.handler, { turnId: 't1' });
    const second = await turn(h.handler, { turnId: 't2' });
    return {
      first: { status: first.status, payload: first.last.payload, leaks: first.text.includes(SECRET) },
      faults: h.faults,
      second: { status: second.status, payloadStatus: second.last.payload?.status, text: second.last.payload?.messages?.at(-1)?.content },
    };
  },

  /** A V2 model (hand-written: ai@7 ships no MockLanguageModelV2): flat usage, string finish, URL data. */
  async v2(env) {
    const { pkg } = env;
    const calls = [];
    const model = {
      specificationVersion: 'v2',
      provider: 'hand-written V2 stand-in (ai/test has no MockLanguageModelV2)',
      modelId: 'v2-model',
      supportedUrls: {},
      doGenerate() { throw new Error('not used'); },
      async doStream(options) {
        calls.push(options);
        const parts = [
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: '0' }, { type: 'text-delta', id: '0', delta: 'v2 says hi' }, { type: 'text-end', id: '0' },
          { type: 'finish', finishReason: 'stop', usage: { inputTokens: 4, outputTokens: 2, totalTokens: 6 } },
        ];
        return { stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) };
      },
    };
    const initialMessages = [{
      id: 'u0', role: 'user', content: 'See this', status: 'complete', createdAt: '2026-07-11T03:00:00.000Z',
      parts: [{ type: 'file', source: 'https://example.com/report.pdf', mimeType: 'application/pdf', filename: 'report.pdf' }],
    }];
    const definition = pkg.defineChat({ id: 'v2', revision: 1, model, memory: pkg.createMemoryChatMemory(), initialMessages });
    const result = await turn(harness(pkg, definition).handler);
    return {
      final: { status: result.last.payload.status, usage: result.last.payload.usage, text: result.last.payload.messages.at(-1).content },
      filePart: callFacts(calls[0]).prompt[0].content[1],
      fileDataIsUrl: calls[0].prompt[0].content[1].data instanceof URL,
    };
  },

  /** Input that breaks the tool's JSON Schema never reaches execute; the model reads why. */
  async invalidInput(env) {
    const { pkg, mocks } = env;
    const runs = [];
    const model = new mocks.MockLanguageModelV4({
      doStream: [streamOf(mocks, TOOL_PARTS('{"query":3}')), streamOf(mocks, ANSWER_PARTS('sorry'))],
    });
    const definition = pkg.defineChat({ id: 'invalid', revision: 1, model, memory: pkg.createMemoryChatMemory(), tools: [lookupTool(runs)] });
    const result = await turn(harness(pkg, definition).handler);
    return { runs, conversation: conversation(result.last.payload), secondPrompt: callFacts(model.doStreamCalls[1]).prompt };
  },

  /** A Standard Schema (zod) tool: its JSON Schema told to the model, its issues read back, its value run. */
  async standardSchema(env) {
    const { pkg, mocks, z } = env;
    const runs = [];
    const model = new mocks.MockLanguageModelV4({
      doStream: [
        streamOf(mocks, TOOL_PARTS('{"query":"ab"}')),
        streamOf(mocks, TOOL_PARTS('{"query":" Cats "}')),
        streamOf(mocks, ANSWER_PARTS('done')),
      ],
    });
    const parameters = z.object({ query: z.string().trim().toLowerCase().min(3) });
    const definition = pkg.defineChat({ id: 'zod', revision: 1, model, memory: pkg.createMemoryChatMemory(), tools: [lookupTool(runs, parameters)] });
    const result = await turn(harness(pkg, definition).handler);
    const calls = model.doStreamCalls.map(callFacts);
    return {
      runs,
      inputSchema: calls[0].tools[0].inputSchema,
      secondPrompt: calls[1].prompt,
      conversation: conversation(result.last.payload),
    };
  },

  /** @ai-sdk/anthropic, unchanged, against the fixture server: a tool turn, then thinking + text. */
  async anthropic(env, path = 'anthropic') {
    const { pkg, createAnthropic } = env;
    const runs = [];
    const model = createAnthropic({ baseURL: `${env.fixtureUrl}/${path}/v1`, apiKey: 'test-key' })('claude-haiku-4-5');
    const definition = pkg.defineChat({
      id: 'anthropic', revision: 1, model, memory: pkg.createMemoryChatMemory(), tools: [lookupTool(runs)],
      instructions: 'Be brief.', maxOutputTokens: 256, temperature: 0.5,
    });
    const h = harness(pkg, definition);
    const result = await turn(h.handler, { input: 'find cats' });
    return provider(model, runs, result, h);
  },

  /** @ai-sdk/openai's Responses API (`openai(id)`), unchanged, against the fixture server. */
  async openaiResponses(env) {
    const { pkg, createOpenAI } = env;
    const runs = [];
    const model = createOpenAI({ baseURL: `${env.fixtureUrl}/openai/v1`, apiKey: 'test-key' })('gpt-test');
    const definition = pkg.defineChat({
      id: 'openai', revision: 1, model, memory: pkg.createMemoryChatMemory(), tools: [lookupTool(runs)],
      instructions: 'Be brief.', maxOutputTokens: 256,
    });
    const h = harness(pkg, definition);
    return provider(model, runs, await turn(h.handler, { input: 'find cats' }), h);
  },

  /** @ai-sdk/openai's chat completions (`openai.chat(id)`), unchanged, against the fixture server. */
  async openaiChat(env) {
    const { pkg, createOpenAI } = env;
    const runs = [];
    const model = createOpenAI({ baseURL: `${env.fixtureUrl}/openai/v1`, apiKey: 'test-key' }).chat('gpt-test');
    const definition = pkg.defineChat({
      id: 'openai-chat', revision: 1, model, memory: pkg.createMemoryChatMemory(), tools: [lookupTool(runs)],
      instructions: 'Be brief.', maxOutputTokens: 256, toolChoice: 'auto',
    });
    const h = harness(pkg, definition);
    return provider(model, runs, await turn(h.handler, { input: 'find cats' }), h);
  },

  /** @ai-sdk/openai-compatible, unchanged, against the fixture server: a tool turn. */
  async openaiCompatible(env) {
    const { pkg, createOpenAICompatible } = env;
    const runs = [];
    const model = createOpenAICompatible({ baseURL: `${env.fixtureUrl}/compatible/v1`, name: 'local', apiKey: 'test-key' })('local-model');
    const definition = pkg.defineChat({
      id: 'compatible', revision: 1, model, memory: pkg.createMemoryChatMemory(), tools: [lookupTool(runs)],
      instructions: 'Be brief.', maxOutputTokens: 256, temperature: 0, toolChoice: 'auto',
    });
    const h = harness(pkg, definition);
    return provider(model, runs, await turn(h.handler, { input: 'find cats' }), h);
  },

  /** @ai-sdk/openai-compatible with `includeUsage`, no tools: one text turn. */
  async openaiCompatibleText(env) {
    const { pkg, createOpenAICompatible } = env;
    const model = createOpenAICompatible({ baseURL: `${env.fixtureUrl}/compatible/v1`, name: 'local', includeUsage: true })('local-model');
    const definition = pkg.defineChat({ id: 'compatible-text', revision: 1, model, memory: pkg.createMemoryChatMemory() });
    const h = harness(pkg, definition);
    return provider(model, [], await turn(h.handler, { input: 'hello' }), h);
  },

  /** @ai-sdk/openai-compatible against a real llama.cpp server (scripts/real-model.sh): text. */
  async realText(env) {
    const { pkg, createOpenAICompatible } = env;
    const model = createOpenAICompatible({ baseURL: env.realUrl, name: 'llama.cpp', includeUsage: true })(env.realModel);
    const definition = pkg.defineChat({
      id: 'real-text', revision: 1, model, memory: pkg.createMemoryChatMemory(),
      instructions: 'Answer in one short sentence.', temperature: 0, maxOutputTokens: 32,
    });
    const h = harness(pkg, definition);
    return provider(model, [], await turn(h.handler, { input: 'Name one colour.' }), h);
  },

  /**
   * @ai-sdk/openai-compatible against a real llama.cpp server: a tool turn. llama_cpp.server
   * answers with a tool call only when the request forces one function by name (its grammar
   * then holds the arguments to the tool's JSON Schema), so the first model call forces
   * `lookup` and the later ones leave the choice to the model, as AI SDK's `prepareStep` would
   * (`forceToolOnFirstCall`): forced on every call, the model would call the tool forever.
   */
  async realTool(env) {
    const { pkg, createOpenAICompatible } = env;
    const runs = [];
    const choices = [];
    const base = createOpenAICompatible({
      baseURL: env.realUrl, name: 'llama.cpp', includeUsage: true, transformRequestBody: llamaCppRequestBody,
    })(env.realModel);
    const model = forceToolOnFirstCall(base, 'lookup', choices);
    // maxLength: the grammar bounds the query, so a small model cannot ramble past maxOutputTokens.
    const parameters = { ...LOOKUP_PARAMETERS, properties: { query: { type: 'string', minLength: 1, maxLength: 40 } } };
    const definition = pkg.defineChat({
      id: 'real-tool', revision: 1, model, memory: pkg.createMemoryChatMemory(), tools: [lookupTool(runs, parameters)],
      instructions: 'Use the lookup tool, then answer in one short sentence.', temperature: 0, maxOutputTokens: 64,
    });
    const h = harness(pkg, definition);
    const facts = provider(model, runs, await turn(h.handler, { input: 'Look up cats.' }), h);
    return { ...facts, choices };
  },

  /** An Anthropic error event mid-stream: the turn fails with the safe diagnostic. */
  async anthropicError(env) {
    const facts = await SCENARIOS.anthropic(env, 'anthropic-error');
    return facts;
  },

  /** workers-ai-provider over a stand-in `env.AI` binding that streams the bytes the binding does. */
  async workersAi(env) {
    const { pkg, createWorkersAI, createStandInAi } = env;
    const runs = [];
    const ai = createStandInAi(env.workersAiFixtures);
    const model = createWorkersAI({ binding: ai })('@cf/meta/llama-3.3-70b-instruct-fp8-fast');
    const definition = pkg.defineChat({
      id: 'workers-ai', revision: 1, model, memory: pkg.createMemoryChatMemory(), tools: [lookupTool(runs)],
      instructions: 'Be brief.', maxOutputTokens: 256,
    });
    const h = harness(pkg, definition);
    const facts = await provider(model, runs, await turn(h.handler, { input: 'find cats' }), h);
    return { ...facts, binding: ai.calls };
  },
};

/**
 * A chat completions body as llama_cpp.server (0.3.36) accepts it: its request schema wants an
 * assistant message's `content` to be a string, while @ai-sdk/openai-compatible sends `null`
 * beside `tool_calls` (as OpenAI's API allows), which the server refuses with a 422.
 */
function llamaCppRequestBody(body) {
  const messages = body.messages.map((m) => (m.role === 'assistant' && m.content === null ? { ...m, content: '' } : m));
  return { ...body, messages };
}

/**
 * `model` with `toolChoice` forcing `toolName` on its first `doStream` and the definition's
 * choice on later ones; `choices` records each call's. The provider's stream is passed as is.
 */
function forceToolOnFirstCall(model, toolName, choices) {
  return {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    supportedUrls: model.supportedUrls,
    doGenerate: (options) => model.doGenerate(options),
    doStream(options) {
      const toolChoice = choices.length === 0 ? { type: 'tool', toolName } : options.toolChoice;
      choices.push(toolChoice ?? null);
      return model.doStream({ ...options, toolChoice });
    },
  };
}

function provider(model, runs, result, h) {
  return {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    runs,
    status: result.status,
    final: { status: result.last.payload.status, usage: result.last.payload.usage, error: result.last.payload.error, conversation: conversation(result.last.payload) },
    leaks: result.text.includes(SECRET),
    faults: h.faults,
  };
}

/** Runs scenario `name` (`name:v3` passes 'v3'). */
export async function runScenario(name, env) {
  const [base, arg] = name.split(':');
  const scenario = SCENARIOS[base];
  if (!scenario) throw new Error(`no scenario ${base}`);
  return scenario(env, arg);
}

export const SCENARIO_NAMES = [
  'mockText:v3', 'mockText:v4', 'mockTool:v3', 'mockTool:v4', 'mockError:v3', 'mockError:v4', 'v2',
  'invalidInput', 'standardSchema', 'anthropic', 'anthropicError', 'openaiResponses', 'openaiChat',
  'openaiCompatible', 'openaiCompatibleText', 'workersAi',
];
