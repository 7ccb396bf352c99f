// AI SDK language models as turnkeep models, in Node: `defineChat({ model })` takes any
// `LanguageModelV2/V3/V4` (duck-typed on `specificationVersion` and `doStream`; no `ai` at run
// time). The scenarios (tests/support/aisdk-scenarios.mjs) run ai/test's MockLanguageModelV3 and
// V4, a hand-written V2 model (ai@7.0.173 ships no MockLanguageModelV2), @ai-sdk/anthropic,
// @ai-sdk/openai (Responses and chat completions) and @ai-sdk/openai-compatible against a local
// fixture server replaying recorded streams, and workers-ai-provider over a stand-in env.AI binding. The same scenarios
// run inside workerd in tests/workerd/aisdk-models.test.mjs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import * as mocks from 'ai/test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createWorkersAI } from 'workers-ai-provider';
import { z } from 'zod';

import * as pkg from '../../js/node.mjs';
import { check, REAL_CHECKS } from '../support/aisdk-checks.mjs';
import { FIXTURES, startFixtureServer } from '../support/aisdk-fixture-server.mjs';
import { runScenario, SCENARIO_NAMES } from '../support/aisdk-scenarios.mjs';
import { createStandInAi } from '../support/workers-ai-standin.mjs';

let server;
before(async () => {
  server = await startFixtureServer();
});
after(() => server?.close());

const env = () => ({
  pkg, mocks, createAnthropic, createOpenAI, createOpenAICompatible, createWorkersAI, createStandInAi, z,
  fixtureUrl: server.url, workersAiFixtures: FIXTURES.workersAi,
});

for (const name of SCENARIO_NAMES) {
  test(`in Node: ${name}`, async () => {
    const facts = await runScenario(name, env());
    check(name, facts, server.requests);
  });
}

test('defineChat: an unknown option, or one turnkeep cannot honour, is a config error naming it', () => {
  const base = { id: 'd', revision: 1, model: new mocks.MockLanguageModelV4(), memory: pkg.createMemoryChatMemory() };
  const cases = [
    [{ ...base, temprature: 0.5 }, /defineChat: unknown option "temprature" \(known: id, revision, model/],
    [{ ...base, systemPrompt: 'x' }, /defineChat: systemPrompt is called instructions here/],
    [{ ...base, temperature: 3 }, /defineChat\.temperature must be a number from 0 to 2/],
    [{ ...base, maxOutputTokens: 0 }, /defineChat\.maxOutputTokens must be an integer from 1 to 1000000/],
    [{ ...base, topP: '1' }, /defineChat\.topP must be a number from 0 to 1/],
    [{ ...base, stopSequences: 'END' }, /defineChat\.stopSequences must be an array/],
    [{ ...base, toolChoice: { type: 'tool', toolName: 'nope' } }, /defineChat\.toolChoice names a tool the definition does not have/],
    [{ ...base, providerOptions: { openai: 1 } }, /defineChat\.providerOptions must be an object of objects/],
    [{ ...base, instructions: 'x'.repeat(65_537) }, /defineChat\.instructions must be a string of at most 65536 characters/],
    [{ ...base, model: { specificationVersion: 'v9', doStream() {} } }, /specificationVersion must be 'v2', 'v3' or 'v4'/],
    [{ ...base, tools: [{ name: 't', description: 'd', inputSchema: {}, execute() {} }] }, /tool t: parameters is missing \(an AI SDK tool's inputSchema is turnkeep's parameters\)/],
    [{ ...base, tools: [{ name: 't', description: 'd', parameters: { '~standard': { validate() {} } }, execute() {} }] }, /a Standard Schema without ~standard\.jsonSchema/],
  ];
  for (const [options, message] of cases) {
    assert.throws(() => pkg.defineChat(options), (e) => e.code === 'SERVER_INVALID_CONFIG' && message.test(e.message), `${message}`);
  }
  const good = pkg.defineChat({ ...base, instructions: 'Be brief.', temperature: 0, toolChoice: 'none' });
  assert.ok(Object.isFrozen(good));
  assert.equal(good.instructions, 'Be brief.');
});

test('the OpenAI-compatible model sends the call settings its wire has', async () => {
  const bodies = [];
  const { createServer } = await import('node:http');
  const upstream = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => { text += c; });
    req.on('end', () => {
      bodies.push(JSON.parse(text));
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(FIXTURES.chatText);
    });
  });
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  try {
    const model = pkg.createOpenAICompatibleModel({ baseUrl: `http://127.0.0.1:${upstream.address().port}/v1`, model: 'm' });
    const definition = pkg.defineChat({
      id: 'compat', revision: 1, model, memory: pkg.createMemoryChatMemory(),
      instructions: 'Be brief.', temperature: 0.2, maxOutputTokens: 64, topP: 0.5, stopSequences: ['END'],
      providerOptions: { openai: { store: false } },
    });
    const handler = pkg.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => pkg.createMemorySessionStorage() });
    const response = await handler(new Request('http://127.0.0.1/api/chat', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ protocol: 'agentskit.chat.turn', version: 1, eventId: 'e1', sessionId: 's1', turnId: 't1', sequence: 0, emittedAt: '2026-07-11T03:00:00.000Z', event: 'client.turn.submit', payload: { input: 'hi' } }),
    }));
    const last = JSON.parse((await response.text()).trimEnd().split('\n').at(-1)).payload;
    assert.equal(last.messages.at(-1).content, 'Found: result for cats');
    const [body] = bodies;
    assert.deepEqual(body.messages[0], { role: 'system', content: 'Be brief.' });
    assert.deepEqual(
      { temperature: body.temperature, max_tokens: body.max_tokens, top_p: body.top_p, stop: body.stop },
      { temperature: 0.2, max_tokens: 64, top_p: 0.5, stop: ['END'] },
    );
    assert.equal('providerOptions' in body || 'store' in body, false, 'providerOptions are for AI SDK models only');
  } finally {
    await new Promise((resolve) => upstream.close(resolve));
  }
});

test('the real-model lane\'s scenarios and checks hold over the recorded exchange (the fixture server)', async () => {
  const lane = { ...env(), realUrl: `${server.url}/compatible/v1`, realModel: 'local-model' };
  for (const name of ['realText', 'realTool']) {
    const from = server.requests.length;
    REAL_CHECKS[name](JSON.parse(JSON.stringify(await runScenario(name, lane))));
    const sent = server.requests.slice(from).map((r) => r.body.tool_choice ?? null);
    const expected = name === 'realTool' ? [{ type: 'function', function: { name: 'lookup' } }, null] : [null];
    assert.deepEqual(sent, expected, `${name}: the tool forced by name on the first call only`);
  }
  const answered = server.requests.at(-1).body.messages.find((m) => m.role === 'assistant');
  assert.equal(answered.content, '', 'llama_cpp.server refuses an assistant content of null: sent as ""');
});

// ---- Optional lane: @ai-sdk/openai-compatible against a real llama.cpp server. scripts/real-model.sh
// (TURNKEEP_REAL_MODEL=1) starts llama_cpp.server with SmolLM2-135M and sets the URL; without it
// these two are skipped. The tool turn forces the tool on the first call only (why: the realTool
// scenario in tests/support/aisdk-scenarios.mjs).
const realUrl = process.env.TURNKEEP_REAL_MODEL_URL;
const realSkip = realUrl ? false : 'TURNKEEP_REAL_MODEL_URL is not set (TURNKEEP_REAL_MODEL=1 bash scripts/real-model.sh sets it)';
for (const name of ['realText', 'realTool']) {
  test(`a real llama.cpp server through @ai-sdk/openai-compatible: ${name}`, { skip: realSkip }, async (t) => {
    const facts = await runScenario(name, { ...env(), realUrl, realModel: process.env.TURNKEEP_REAL_MODEL_NAME || 'smollm2' });
    t.diagnostic(`the model's turn: ${JSON.stringify({ runs: facts.runs, usage: facts.final.usage, conversation: facts.final.conversation.slice(1) })}`);
    REAL_CHECKS[name](JSON.parse(JSON.stringify(facts)));
  });
}
