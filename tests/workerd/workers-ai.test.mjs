// The demo Worker with an `AI` binding chats with Workers AI through workers-ai-provider
// (js/cloudflare/worker.mjs builds the AI SDK model, the Rust host drives it), in real workerd.
// Workers AI itself cannot run offline, so `env.AI` is a stand-in that streams the bytes the
// binding streams (tests/workerd/workers-ai-worker.mjs); without the binding the demo model
// answers, as before.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { checkBinding } from '../support/aisdk-checks.mjs';
import { FIXTURES } from '../support/aisdk-fixture-server.mjs';
import { getSession, ndjson, postTurn, startWorker } from './harness.mjs';

/** src/cloudflare/chat.rs's DEMO_INSTRUCTIONS: what a real model is told. */
const INSTRUCTIONS = "You are the turnkeep demo's assistant. Answer briefly. Call the lookup tool to look something up; the transfer tool moves an amount and needs a person's approval.";

let worker;
before(async () => {
  worker = await startWorker({
    scriptPath: 'tests/workerd/workers-ai-worker.mjs',
    bindings: { WORKERS_AI_FIXTURES: JSON.stringify(FIXTURES.workersAi), STREAMS_PUBLIC: '1' },
  });
});
after(() => worker?.stop());

test('with an AI binding the demo chat runs on Workers AI: a tool turn through workers-ai-provider', async () => {
  const response = await postTurn(worker.url, 'demo', 'wai-1', 'look up cats');
  assert.equal(response.status, 200);
  const last = (await ndjson(response)).at(-1).payload;
  assert.equal(last.status, 'complete', JSON.stringify(last));
  const [user, call, result, answer] = last.messages;
  assert.equal(user.content, 'look up cats');
  assert.deepEqual(call.toolCalls.map((c) => [c.name, c.args, c.status, c.result]), [['lookup', { query: 'cats' }, 'complete', 'result for cats']]);
  assert.equal(result.role, 'tool');
  assert.equal(answer.content, 'Found: result for cats');
  assert.deepEqual(last.usage, { promptTokens: 74, completionTokens: 15, totalTokens: 89 });

  const calls = await (await fetch(`${worker.url}/__standin/ai-calls`)).json();
  checkBinding(calls, { instructions: INSTRUCTIONS });
  assert.equal(calls[0].model, '@cf/meta/llama-3.3-70b-instruct-fp8-fast', 'the default WORKERS_AI_MODEL');
  assert.deepEqual(calls[0].inputs.tools.map((t) => t.function.name), ['lookup', 'transfer'], 'the demo tools');

  // The session's stream projects to the same conversation.
  const session = await getSession(worker.url, 'demo', 'wai-1');
  assert.equal(session.messages.at(-1).content, 'Found: result for cats');
  assert.ok(session.renderParts.some((p) => p.type === 'tool' && p.name === 'lookup' && p.status === 'complete'));
});
