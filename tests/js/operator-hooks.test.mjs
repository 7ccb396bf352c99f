// The chat handlers' operator hooks.
//
// `onTurnEnd(event)`: each ended turn's ids, outcome, finish reason, usage and duration (no
// message text), called after cleanup and never awaited: a hook that throws, rejects or never
// settles changes nothing a client gets.
//
// `rateLimit({ context, sessionId, signal })`: asked before a
// turn-starting request claims anything (createChatHandler's submit and confirmation decisions,
// createUIMessageChatHandler's sends and RunAgentInputs; never a stop). A refusal is
// `429 CHAT_RATE_LIMITED` with `retry-after`, and nothing was claimed or run. The hook is bounded
// and isolated: one that throws, answers something else or never answers lets the request go on,
// and onError gets `stage: 'rateLimit'`.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as pkg from '../../js/node.mjs';
import { submitEvent } from '../support/chat-harness.mjs';

const { createChatHandler, createUIMessageChatHandler, createDemoModel, createMemoryChatMemory, createMemorySessionStorage, defineChat } = pkg;

const transfer = {
  name: 'transfer',
  description: 'Moves money; a person approves it first.',
  parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
  requiresConfirmation: true,
  execute: async ({ amount }) => `transferred ${amount}`,
};

function setup(rateLimit, make = createUIMessageChatHandler, extra = {}) {
  const memory = createMemoryChatMemory();
  const storage = createMemorySessionStorage();
  const faults = [];
  const asked = [];
  const chat = make({
    authenticate: async () => ({ ok: true, context: { user: 'u1' } }),
    resolveDefinition: () => defineChat({ id: 'demo', revision: 1, model: createDemoModel({ chunkDelayMs: 0 }), memory, tools: [transfer] }),
    sessionStorage: () => storage,
    rateLimit: (input) => {
      asked.push({ context: input.context, sessionId: input.sessionId, signal: input.signal instanceof AbortSignal });
      return rateLimit(input);
    },
    onError: (error, info) => faults.push({ stage: info.stage, message: String(error?.message ?? error) }),
    ...extra,
  });
  return { chat, memory, storage, faults, asked };
}

const uiSend = (chat, id, text, session = 's1') => chat(new Request('http://x/api/chat', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ id: session, trigger: 'submit-message', messages: [{ id, role: 'user', parts: [{ type: 'text', text }] }] }),
}));

test('a refusal is 429 CHAT_RATE_LIMITED with retry-after, before anything is claimed', async () => {
  let allow = false;
  const s = setup(() => (allow ? { ok: true } : { ok: false, retryAfterMs: 1500 }));
  const refused = await uiSend(s.chat, 'u1', 'hello');
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '2');
  const body = await refused.json();
  assert.equal(body.error.code, 'CHAT_RATE_LIMITED');
  assert.equal(body.error.retryable, true);
  assert.deepEqual(s.asked, [{ context: { user: 'u1' }, sessionId: 's1', signal: true }]);
  assert.equal(await s.storage.load('s1'), undefined, 'nothing claimed');
  assert.deepEqual(await s.memory.load({ signal: AbortSignal.timeout(1_000) }), [], 'nothing ran');

  allow = true;
  const sent = await uiSend(s.chat, 'u1', 'hello');
  assert.equal(sent.status, 200, 'the same message goes through once allowed: the refusal was no turn');
  assert.match(await sent.text(), /echo: hello/);
  assert.deepEqual(s.faults, []);
});

test('a refusal that does not say when has no retry-after', async () => {
  const s = setup(() => ({ ok: false }));
  const refused = await uiSend(s.chat, 'u1', 'hello');
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), null);
});

test('createChatHandler asks before a submit, not before a stop', async () => {
  const s = setup(() => ({ ok: false, retryAfterMs: 10 }), createChatHandler);
  const submit = await s.chat(new Request('http://x/api/chat', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(submitEvent({ sessionId: 's1', turnId: 't1', input: 'hello' })),
  }));
  assert.equal(submit.status, 429);
  assert.equal((await submit.json()).error.code, 'CHAT_RATE_LIMITED');
  const stop = await s.chat(new Request('http://x/api/chat', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...submitEvent({ sessionId: 's1', turnId: 't1', input: 'x' }), event: 'client.turn.stop', payload: {} }),
  }));
  assert.notEqual(stop.status, 429, 'a stop is never rate limited');
  assert.equal(s.asked.length, 1);
});

test('a hook that throws, answers something else or never answers lets the turn run; onError says why', async () => {
  const cases = [
    [() => { throw new Error('limiter down'); }, /limiter down/],
    [() => ({ allowed: true }), /must return \{ ok: true \}/],
    [() => new Promise(() => {}), /did not answer within 500 ms/],
  ];
  for (const [hook, why] of cases) {
    const s = setup(hook);
    const sent = await uiSend(s.chat, 'u1', 'hello');
    assert.equal(sent.status, 200, String(why));
    assert.match(await sent.text(), /echo: hello/);
    assert.deepEqual(s.faults.map((f) => f.stage), ['rateLimit'], String(why));
    assert.match(s.faults[0].message, why);
  }
});

test('onTurnEnd: each ended turn, without its text; a hook that throws, rejects or never settles changes nothing', async () => {
  const ended = [];
  const hooks = [
    (event) => { ended.push(event); },
    (event) => { ended.push(event); throw new Error('observer down'); },
    (event) => { ended.push(event); return Promise.reject(new Error('observer down')); },
    (event) => { ended.push(event); return new Promise(() => {}); },
  ];
  for (const [i, onTurnEnd] of hooks.entries()) {
    const s = setup(() => ({ ok: true }), createUIMessageChatHandler, { onTurnEnd });
    const sent = await uiSend(s.chat, `u${i}`, 'hello');
    assert.equal(sent.status, 200);
    assert.match(await sent.text(), /echo: hello/, `hook ${i}`);
    const waits = await uiSend(s.chat, `w${i}`, '/confirm 5');
    await waits.text();
  }
  assert.equal(ended.length, 8, 'one event per turn');
  const [first, second] = ended;
  assert.deepEqual(Object.keys(first).sort(), ['durationMs', 'finishReason', 'outcome', 'sessionId', 'turnId', 'usage']);
  assert.equal(first.sessionId, 's1');
  assert.equal(first.turnId, 'ui-u0');
  assert.equal(first.outcome, 'completed');
  assert.equal(first.finishReason, 'stop');
  assert.equal(second.finishReason, 'tool-calls', 'the approval waits');
  assert.ok(first.durationMs >= 0 && first.usage.totalTokens >= 0, JSON.stringify(first));
  assert.doesNotMatch(JSON.stringify(ended), /hello|echo/, 'no message text');
});
