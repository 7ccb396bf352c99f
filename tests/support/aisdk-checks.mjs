// What the scenarios of tests/support/aisdk-scenarios.mjs must show, wherever they ran (Node or
// workerd): `check(name, facts, requests)`, where `requests` are the fixture server's recorded
// requests for the provider scenarios.
import assert from 'node:assert/strict';
import { EventSchemas } from '@ag-ui/core/schemas';
import { StreamProcessor } from '@tanstack/ai';

const tail = (list) => list.at(-1);

const TOOL_SPEC = {
  type: 'function',
  name: 'lookup',
  description: 'Looks a thing up.',
  inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false },
};

/** The file part of the initial user message, as a model of `version` must get it. */
const imagePart = (version) => ({
  type: 'file',
  mediaType: 'image/png',
  data: version === 'v4' ? { type: 'data', data: 'iVBORw0KGgo=' } : 'iVBORw0KGgo=',
});

const CHECKS = {
  mockText(facts, { version }) {
    assert.equal(facts.specificationVersion, version);
    assert.equal(facts.status, 200);
    assert.equal(facts.final.status, 'complete');
    // Usage arrives nested (inputTokens.total, outputTokens.total) with no total: added here.
    assert.deepEqual(facts.final.usage, { promptTokens: 7, completionTokens: 3, totalTokens: 10 });
    assert.deepEqual(tail(facts.final.conversation), { role: 'assistant', content: 'Hello there', status: 'complete', reasoning: 'Think first.' });
    // The mock's recorded call: instructions, the conversation with its file part, the settings.
    assert.equal(facts.calls.length, 1);
    const [call] = facts.calls;
    assert.deepEqual(call.prompt, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, imagePart(version)] },
      { role: 'assistant', content: [{ type: 'text', text: 'A cat.' }] },
      { role: 'user', content: [{ type: 'text', text: 'And now?' }] },
    ]);
    assert.deepEqual(
      { temperature: call.temperature, maxOutputTokens: call.maxOutputTokens, topP: call.topP, stopSequences: call.stopSequences, providerOptions: call.providerOptions },
      { temperature: 0.3, maxOutputTokens: 128, topP: 0.9, stopSequences: ['END'], providerOptions: { mock: { seed: 7 } } },
    );
    assert.equal(call.abortSignal, 'AbortSignal', 'the model gets the turn\'s abort signal');
    assert.equal('tools' in call, false, 'no tools, no tools option');
    checkReasoningLog(facts.chunks, 'Think first.');
    assert.deepEqual(tanstackThinking(facts.chunks), ['Think first.'], 'TanStack\'s processor reads the reasoning as a thinking part');
    assert.deepEqual(facts.projected, facts.final.conversation, 'the log projects to the snapshot\'s messages');
    assert.deepEqual(facts.renderParts.map((p) => [p.type, p.text]), [['reasoning', 'Think first.'], ['text', 'Hello there']]);
    assert.ok(facts.html.includes('<details class="reasoning"><summary>Reasoning</summary><div class="reasoning-text">Think first.</div></details>'), facts.html);
    assert.ok(!/<details[^>]* open/.test(facts.html), 'reasoning is drawn collapsed');
  },

  mockTool(facts) {
    assert.deepEqual(facts.runs, [{ query: 'cats' }], 'the host tool ran once');
    assert.equal(facts.final.status, 'complete');
    assert.deepEqual(facts.final.usage, { promptTokens: 14, completionTokens: 6, totalTokens: 20 }, 'both calls counted');
    assert.deepEqual(facts.final.conversation.slice(-3), [
      { role: 'assistant', content: '', status: 'complete', toolCalls: [{ name: 'lookup', args: { query: 'cats' }, status: 'complete', result: 'result for cats' }] },
      { role: 'tool', content: 'result for cats', status: 'complete' },
      { role: 'assistant', content: 'found it', status: 'complete' },
    ]);
    assert.equal(facts.calls.length, 2);
    assert.deepEqual(facts.calls[0].tools, [TOOL_SPEC]);
    // The second call: the call and its result beside it.
    assert.deepEqual(facts.calls[1].prompt.slice(-2), [
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: { query: 'cats' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'lookup', output: { type: 'text', value: 'result for cats' } }] },
    ]);
  },

  mockError(facts) {
    assert.equal(facts.first.status, 200);
    assert.equal(facts.first.payload.status, 'error');
    assert.deepEqual(facts.first.payload.error, { version: 1, code: 'CHAT_TURN_FAILED', message: 'The chat turn failed.', retryable: true });
    assert.equal(facts.first.leaks, false, 'nothing the model streamed reaches the client');
    assert.ok(facts.faults.some((f) => f.stage === 'model' && f.isError && f.message.includes('SECRET-4711')), `the operator gets the model's error: ${JSON.stringify(facts.faults)}`);
    assert.deepEqual(facts.second, { status: 200, payloadStatus: 'complete', text: 'ok' }, 'the lease was released: the next turn runs');
  },

  v2(facts) {
    assert.deepEqual(facts.final, { status: 'complete', usage: { promptTokens: 4, completionTokens: 2, totalTokens: 6 }, text: 'v2 says hi' });
    assert.deepEqual(facts.filePart, { type: 'file', mediaType: 'application/pdf', data: 'https://example.com/report.pdf', filename: 'report.pdf' });
    assert.equal(facts.fileDataIsUrl, true, 'V2 takes a URL object');
  },

  invalidInput(facts) {
    assert.deepEqual(facts.runs, [], 'invalid input never reaches execute');
    const text = 'Invalid input for tool lookup: input.query must be a string.';
    assert.deepEqual(facts.conversation.slice(-3), [
      { role: 'assistant', content: '', status: 'complete', toolCalls: [{ name: 'lookup', args: { query: 3 }, status: 'error', error: text }] },
      { role: 'tool', content: text, status: 'error' },
      { role: 'assistant', content: 'sorry', status: 'complete' },
    ]);
    assert.deepEqual(tail(facts.secondPrompt), {
      role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'lookup', output: { type: 'error-text', value: text } }],
    });
  },

  standardSchema(facts) {
    assert.equal(facts.inputSchema.type, 'object');
    assert.deepEqual(facts.inputSchema.properties.query, { type: 'string', minLength: 3 });
    const error = tail(facts.secondPrompt).content[0].output;
    assert.equal(error.type, 'error-text');
    assert.match(error.value, /^Invalid input for tool lookup: input\.query .*3/);
    assert.deepEqual(facts.runs, [{ query: 'cats' }], 'execute got the schema\'s value (trimmed, lower-cased), once');
    assert.equal(tail(facts.conversation).content, 'done');
  },

  anthropic(facts, { requests }) {
    providerTurn(facts, 'anthropic.messages');
    assert.deepEqual(facts.final.usage, { promptTokens: 89, completionTokens: 21, totalTokens: 110 });
    assert.equal(tail(facts.final.conversation).reasoning, 'The tool found it; say so.');
    const [first, second] = requests.filter((r) => r.path === '/anthropic/v1/messages').slice(-2);
    assert.equal(first.headers['x-api-key'], 'test-key');
    assert.deepEqual(first.body.system, [{ type: 'text', text: 'Be brief.' }]);
    assert.equal(first.body.max_tokens, 256);
    assert.equal(first.body.temperature, 0.5);
    assert.deepEqual(first.body.tools.map((t) => [t.name, t.input_schema.required]), [['lookup', ['query']]]);
    // Anthropic gets the call and its result beside it (the tool message merged into a user turn).
    assert.deepEqual(second.body.messages.slice(-2), [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_tk1', name: 'lookup', input: { query: 'cats' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_tk1', content: 'result for cats' }] },
    ]);
  },

  anthropicError(facts) {
    assert.equal(facts.status, 200);
    assert.equal(facts.final.status, 'error');
    assert.equal(facts.final.error.code, 'CHAT_TURN_FAILED');
    assert.equal(facts.leaks, false);
    assert.ok(facts.faults.some((f) => f.stage === 'model'), JSON.stringify(facts.faults));
  },

  openaiResponses(facts, { requests }) {
    providerTurn(facts, 'openai.responses');
    assert.deepEqual(facts.final.usage, { promptTokens: 100, completionTokens: 17, totalTokens: 117 });
    const [first, second] = requests.filter((r) => r.path === '/openai/v1/responses').slice(-2);
    assert.equal(first.headers.authorization, 'Bearer test-key');
    assert.equal(first.body.max_output_tokens, 256);
    assert.deepEqual(first.body.input[0], { role: 'system', content: 'Be brief.' });
    assert.deepEqual(first.body.tools.map((t) => [t.type, t.name]), [['function', 'lookup']]);
    assert.deepEqual(second.body.input.slice(-2), [
      { type: 'function_call', call_id: 'call_tk1', name: 'lookup', arguments: '{"query":"cats"}' },
      { type: 'function_call_output', call_id: 'call_tk1', output: 'result for cats' },
    ]);
  },

  openaiChat(facts, { requests }) {
    providerTurn(facts, 'openai.chat');
    assert.deepEqual(facts.final.usage, { promptTokens: 100, completionTokens: 17, totalTokens: 117 });
    const [first, second] = requests.filter((r) => r.path === '/openai/v1/chat/completions').slice(-2);
    assert.equal(first.body.max_tokens, 256);
    assert.equal(first.body.tool_choice, 'auto');
    assert.deepEqual(first.body.messages[0], { role: 'system', content: 'Be brief.' });
    assert.deepEqual(second.body.messages.slice(-2), [
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_tk1', type: 'function', function: { name: 'lookup', arguments: '{"query":"cats"}' } }] },
      { role: 'tool', tool_call_id: 'call_tk1', content: 'result for cats' },
    ]);
  },

  openaiCompatible(facts, { requests }) {
    providerTurn(facts, 'local.chat');
    assert.deepEqual(facts.final.usage, { promptTokens: 100, completionTokens: 17, totalTokens: 117 });
    const [first, second] = requests.filter((r) => r.path === '/compatible/v1/chat/completions' && r.body.tools).slice(-2);
    assert.equal(first.headers.authorization, 'Bearer test-key');
    assert.equal(first.body.model, 'local-model');
    assert.equal(first.body.stream, true);
    assert.equal(first.body.max_tokens, 256);
    assert.equal(first.body.temperature, 0);
    assert.equal(first.body.tool_choice, 'auto');
    assert.deepEqual(first.body.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'find cats' }]);
    assert.deepEqual(first.body.tools, [{ type: 'function', function: { name: 'lookup', description: TOOL_SPEC.description, parameters: TOOL_SPEC.inputSchema } }]);
    // The second call: the call and its result beside it.
    assert.deepEqual(second.body.messages.slice(-2), [
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_tk1', type: 'function', function: { name: 'lookup', arguments: '{"query":"cats"}' } }] },
      { role: 'tool', tool_call_id: 'call_tk1', content: 'result for cats' },
    ]);
  },

  openaiCompatibleText(facts, { requests }) {
    assert.equal(facts.specificationVersion, 'v4');
    assert.equal(facts.provider, 'local.chat');
    assert.equal(facts.status, 200);
    assert.equal(facts.final.status, 'complete', JSON.stringify(facts));
    assert.deepEqual(tail(facts.final.conversation), { role: 'assistant', content: 'Found: result for cats', status: 'complete' });
    assert.deepEqual(facts.final.usage, { promptTokens: 60, completionTokens: 6, totalTokens: 66 });
    const request = requests.filter((r) => r.path === '/compatible/v1/chat/completions' && !r.body.tools).at(-1);
    assert.equal('authorization' in request.headers, false, 'no key, no authorization header');
    assert.deepEqual(request.body.stream_options, { include_usage: true });
    assert.deepEqual(request.body.messages, [{ role: 'user', content: 'hello' }]);
  },

  workersAi(facts) {
    providerTurn(facts, 'workersai.chat');
    assert.deepEqual(facts.final.usage, { promptTokens: 74, completionTokens: 15, totalTokens: 89 });
    checkBinding(facts.binding);
  },
};

/** A provider's tool turn: the tool ran once, its result answered, the text streamed. */
function providerTurn(facts, provider) {
  assert.equal(facts.specificationVersion, 'v4');
  assert.equal(facts.provider, provider);
  assert.equal(facts.status, 200);
  assert.equal(facts.final.status, 'complete', JSON.stringify(facts));
  assert.deepEqual(facts.runs, [{ query: 'cats' }]);
  const conversation = facts.final.conversation;
  assert.deepEqual(conversation.at(-3).toolCalls, [{ name: 'lookup', args: { query: 'cats' }, status: 'complete', result: 'result for cats' }]);
  assert.equal(conversation.at(-2).role, 'tool');
  assert.equal(tail(conversation).content, 'Found: result for cats');
}

/** What workers-ai-provider asked the (stand-in) binding: two streaming runs, the result beside its call. */
export function checkBinding(calls, { instructions = 'Be brief.' } = {}) {
  assert.equal(calls.length, 2, 'one binding.run per model call');
  assert.equal(calls[0].inputs.stream, true);
  assert.equal(calls[0].hasSignal, true, 'the binding gets the turn\'s abort signal');
  assert.deepEqual(calls[0].inputs.messages[0], { role: 'system', content: instructions });
  assert.ok(calls[0].inputs.tools.some((t) => t.type === 'function' && t.function.name === 'lookup'));
  const [assistant, tool] = calls[1].inputs.messages.slice(-2);
  assert.equal(assistant.role, 'assistant');
  assert.equal(assistant.tool_calls[0].function.name, 'lookup');
  assert.deepEqual(JSON.parse(assistant.tool_calls[0].function.arguments), { query: 'cats' });
  assert.equal(tool.role, 'tool');
  assert.equal(tool.tool_call_id, assistant.tool_calls[0].id, 'the result is beside its call');
  assert.equal(tool.content, 'result for cats');
}

/**
 * The reasoning of a turn in the session log: AG-UI 1.0's REASONING_* events (each one valid
 * for @ag-ui/core's schema), one span closed before the text and the run's end, under the
 * assistant message (`parentMessageId`); and TanStack's processor reads it as a thinking part.
 */
export function checkReasoningLog(chunks, text) {
  const reasoning = chunks.filter((c) => String(c.type).startsWith('REASONING_'));
  for (const chunk of reasoning) {
    const parsed = EventSchemas.safeParse(chunk);
    assert.ok(parsed.success, `@ag-ui/core refuses ${JSON.stringify(chunk)}: ${parsed.error?.message}`);
  }
  const types = reasoning.map((c) => c.type);
  assert.deepEqual([types[0], types[1], types.at(-2), types.at(-1)], ['REASONING_START', 'REASONING_MESSAGE_START', 'REASONING_MESSAGE_END', 'REASONING_END']);
  assert.ok(types.slice(2, -2).every((t) => t === 'REASONING_MESSAGE_CONTENT'));
  assert.equal(reasoning.filter((c) => c.type === 'REASONING_MESSAGE_CONTENT').map((c) => c.delta).join(''), text);
  const id = reasoning[0].messageId;
  assert.ok(reasoning.every((c) => c.messageId === id), 'one reasoning message id');
  assert.equal(reasoning[1].role, 'reasoning');
  const all = chunks.map((c) => c.type);
  const end = all.lastIndexOf('REASONING_END');
  assert.ok(end < all.lastIndexOf('TEXT_MESSAGE_CONTENT') && end < all.indexOf('RUN_FINISHED'), 'closed before the text and the run end');
  const parent = chunks.find((c) => c.type === 'TEXT_MESSAGE_START' && c.messageId === reasoning[0].parentMessageId);
  assert.ok(parent && chunks.indexOf(parent) < chunks.indexOf(reasoning[0]), 'under its assistant message, opened first');
}

/** TanStack's StreamProcessor reading a log: the thinking parts of its last message. */
export function tanstackThinking(chunks) {
  const processor = new StreamProcessor();
  for (const chunk of chunks) processor.processChunk(chunk);
  processor.finalizeStream();
  const last = processor.getMessages().at(-1);
  return last.parts.filter((p) => p.type === 'thinking').map((p) => p.content);
}

/**
 * What the real-model scenarios (`realText`, `realTool`: @ai-sdk/openai-compatible against a
 * real llama.cpp server, scripts/real-model.sh) must show. The words are the model's: only
 * their presence is checked.
 */
export const REAL_CHECKS = {
  realText(facts) {
    assert.equal(facts.provider, 'llama.cpp.chat');
    assert.equal(facts.status, 200);
    assert.equal(facts.final.status, 'complete', JSON.stringify(facts));
    const answer = tail(facts.final.conversation);
    assert.equal(answer.role, 'assistant');
    assert.ok(answer.content.trim().length > 0, 'some text came back');
    assert.deepEqual(facts.faults, []);
  },

  realTool(facts) {
    assert.equal(facts.provider, 'llama.cpp.chat');
    assert.equal(facts.final.status, 'complete', JSON.stringify(facts));
    assert.equal(facts.runs.length, 1, `the host tool ran once: ${JSON.stringify(facts)}`);
    assert.equal(typeof facts.runs[0].query, 'string', 'the arguments hold to the tool\'s schema');
    assert.deepEqual(facts.choices, [{ type: 'tool', toolName: 'lookup' }, null], 'two model calls: forced, then free');
    const [call, result, answer] = facts.final.conversation.slice(-3);
    assert.deepEqual(call.toolCalls, [{ name: 'lookup', args: facts.runs[0], status: 'complete', result: `result for ${facts.runs[0].query}` }]);
    assert.deepEqual(result, { role: 'tool', content: `result for ${facts.runs[0].query}`, status: 'complete' });
    assert.equal(answer.role, 'assistant');
    assert.ok(answer.content.trim().length > 0, 'the second call answered in text');
    assert.deepEqual(facts.faults, []);
  },
};

/**
 * Checks scenario `name`'s facts (`requests`: the fixture server's, for the provider scenarios).
 * Facts are compared as JSON (what a Worker answers), so absent and `undefined` are the same.
 */
export function check(name, facts, requests = []) {
  const [base, version] = name.split(':');
  CHECKS[base](JSON.parse(JSON.stringify(facts)), { version, requests });
}
