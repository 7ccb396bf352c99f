// Tool confirmations over HTTP with createChatHandler in Node (real Request/Response/
// ReadableStream): `/confirm N` leaves a pending record in the session and in every snapshot,
// `client.confirmation.resolve` posted to the same endpoint claims the decision by CAS and
// streams the continuation to the one request that won, every other request gets the record's
// state; expiry, replays, foreign tokens, a store that fails after the claim with the handler's
// reconciliation methods, and stored conversation state. The "tool ran" figures come from the
// tool's own execute calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as pkg from '../../js/node.mjs';
import { countingStorage, readTurn, recordingMemory, submitEvent } from '../support/chat-harness.mjs';

const { createChatHandler, createDemoModel, createMemorySessionLog, defineChat, projectChatSnapshot, resumeChatSession } = pkg;

const START_MS = 1_783_738_800_000;

/** A handler over the demo model, per-tenant storage (Bearer <tenant>), a session log each. */
function setup({ ttlMs = 60_000, storageFor, conversation } = {}) {
  const clock = { now: START_MS };
  const runs = [];
  const tools = [
    {
      name: 'transfer',
      description: 'Moves money; a person approves it.',
      parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
      requiresConfirmation: true,
      async execute(args, context) {
        runs.push({ args, idempotencyKey: context.idempotencyKey, toolCallId: context.toolCallId, signal: context.signal instanceof AbortSignal });
        return `transferred ${args.amount}`;
      },
    },
  ];
  const tenants = new Map();
  const tenant = (name) => {
    if (!tenants.has(name)) {
      tenants.set(name, { storage: storageFor?.(name) ?? countingStorage(pkg), memory: recordingMemory(), log: createMemorySessionLog() });
    }
    return tenants.get(name);
  };
  const pending = [];
  const host = { waitUntil: (promise) => pending.push(promise) };
  const handler = createChatHandler({
    authenticate: (request) => {
      const match = /^Bearer (\S+)$/.exec(request.headers.get('authorization') ?? '');
      return match ? { ok: true, context: { tenant: match[1] } } : { ok: false, response: new Response('no', { status: 401 }) };
    },
    resolveDefinition: ({ tenant: name }) =>
      defineChat({ id: 'demo', revision: 1, model: createDemoModel({ chunkDelayMs: 1 }), memory: tenant(name).memory, tools, conversation }),
    sessionStorage: ({ tenant: name }) => tenant(name).storage,
    sessionLog: ({ tenant: name }) => tenant(name).log,
    now: () => clock.now,
    confirmationTtlMs: ttlMs,
  });
  const post = (event, who = 'acme') =>
    handler(
      new Request('http://local/api/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${who}` },
        body: JSON.stringify(event),
      }),
      host,
    );
  const settled = () => Promise.all(pending.splice(0));
  return { handler, post, settled, runs, clock, tenant };
}

function resolveEvent(token, decision, { sessionId = 's1', turnId = 't1', reason } = {}) {
  return {
    ...submitEvent({ sessionId, turnId }),
    eventId: `e-${decision}-${Math.random().toString(36).slice(2)}`,
    event: 'client.confirmation.resolve',
    payload: { token, decision, ...(reason === undefined ? {} : { reason }) },
  };
}

/** `/confirm 250` as turn t1; returns the final snapshot's payload. */
async function propose(env) {
  const response = await env.post(submitEvent({ sessionId: 's1', turnId: 't1', input: '/confirm 250' }));
  assert.equal(response.status, 200);
  const turn = await readTurn(pkg, response);
  await env.settled();
  assert.deepEqual(turn.faults, []);
  return turn.snapshots.at(-1).payload;
}

/** The answer to one resolve: the stream's last snapshot, or the JSON answer. */
async function decide(env, event, who) {
  const response = await env.post(event, who);
  const type = response.headers.get('content-type') ?? '';
  if (type.startsWith('application/x-ndjson')) {
    const turn = await readTurn(pkg, response);
    return { status: response.status, streamed: true, turn, last: turn.snapshots.at(-1) };
  }
  return { status: response.status, streamed: false, body: await response.json() };
}

test('a call that needs a person leaves a pending record, shown in the snapshot, and frees the session', async () => {
  const env = setup();
  const payload = await propose(env);
  const call = payload.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.name === 'transfer');
  assert.equal(call.status, 'requires_confirmation');
  assert.equal(payload.confirmations.length, 1);
  const [record] = payload.confirmations;
  assert.deepEqual(
    { token: record.token, action: record.action, input: record.input, toolCallId: record.toolCallId, status: record.status },
    { token: `confirm-${call.id}`, action: 'transfer', input: { amount: 250 }, toolCallId: call.id, status: 'pending' },
  );
  assert.equal(record.expiresAt, START_MS + 60_000);
  const stored = await env.tenant('acme').storage.stored('s1');
  assert.deepEqual(stored.confirmations, [record], 'the snapshot shows what the release stored');
  assert.equal(stored.activeTurn, undefined, 'no lease while a person decides');
  const { chunks } = await env.tenant('acme').log.read();
  const projected = projectChatSnapshot(chunks);
  assert.deepEqual(projected.confirmations, [{ ...record }]);
  assert.equal(env.runs.length, 0);
});

test('approve streams the continuation to the winner, runs the tool once with the token, and the replay runs nothing', async () => {
  const env = setup();
  const [record] = (await propose(env)).confirmations;
  const won = await decide(env, resolveEvent(record.token, 'approve'));
  await env.settled();
  assert.equal(won.status, 200);
  assert.ok(won.streamed, 'the winner gets the continuation as NDJSON');
  assert.deepEqual(won.turn.faults, []);
  assert.ok(won.turn.snapshots.every((s) => s.turnId === record.token), 'its turn id is the token');
  assert.deepEqual(won.last.payload.confirmations.map((c) => c.status), ['approved']);
  assert.equal(won.last.payload.messages.at(-1).content, 'transfer: transferred 250');
  assert.deepEqual(env.runs, [{ args: { amount: 250 }, idempotencyKey: record.token, toolCallId: record.toolCallId, signal: true }]);
  const stored = await env.tenant('acme').storage.stored('s1');
  assert.equal(stored.confirmations[0].status, 'approved');
  const { chunks } = await env.tenant('acme').log.read();
  const projected = projectChatSnapshot(chunks);
  assert.deepEqual(projected.messages, env.tenant('acme').memory.messages, 'the log projects to the saved messages');
  assert.equal(projected.confirmations[0].status, 'approved');
  // The same decision again: the record's state, nothing run.
  const replay = await decide(env, resolveEvent(record.token, 'approve'));
  assert.equal(replay.status, 200);
  assert.deepEqual(replay.body, { confirmation: { version: 1, ...record, status: 'approved' } });
  assert.equal(env.runs.length, 1);
});

test('reject feeds the reason to the model; the tool never runs', async () => {
  const env = setup();
  const [record] = (await propose(env)).confirmations;
  const won = await decide(env, resolveEvent(record.token, 'reject', { reason: 'too much' }));
  await env.settled();
  assert.ok(won.streamed);
  assert.deepEqual(won.last.payload.confirmations.map((c) => c.status), ['rejected']);
  const tool = won.last.payload.messages.find((m) => m.role === 'tool');
  assert.equal(tool.content, 'A person rejected this tool call. Reason: too much');
  assert.equal(env.runs.length, 0);
});

test('approve and reject raced from two clients: one wins, the other gets the final state', async () => {
  for (const first of ['approve', 'reject']) {
    const env = setup({ storageFor: () => countingStorage(pkg, { delayLoads: true }) });
    const [record] = (await propose(env)).confirmations;
    const second = first === 'approve' ? 'reject' : 'approve';
    const answers = await Promise.all([decide(env, resolveEvent(record.token, first)), decide(env, resolveEvent(record.token, second))]);
    await env.settled();
    assert.equal(answers.filter((a) => a.streamed).length, 1, `${first} first: exactly one winner`);
    const stored = (await env.tenant('acme').storage.stored('s1')).confirmations[0];
    assert.ok(['approved', 'rejected'].includes(stored.status));
    const loser = answers.find((a) => !a.streamed);
    assert.equal(loser.status, 200);
    assert.equal(loser.body.confirmation.status, stored.status, 'the loser gets the final state');
    assert.equal(env.runs.length, stored.status === 'approved' ? 1 : 0);
  }
});

test('20 concurrent approves: one continuation, 19 answers approved, the tool ran once', async () => {
  const env = setup({ storageFor: () => countingStorage(pkg, { delayLoads: true }) });
  const [record] = (await propose(env)).confirmations;
  const answers = await Promise.all(Array.from({ length: 20 }, () => decide(env, resolveEvent(record.token, 'approve'))));
  await env.settled();
  assert.equal(answers.filter((a) => a.streamed).length, 1);
  const others = answers.filter((a) => !a.streamed);
  assert.deepEqual(
    others.map((a) => [a.status, a.body.confirmation.status]),
    Array.from({ length: 19 }, () => [200, 'approved']),
  );
  assert.equal(env.runs.length, 1);
});

test('an expired confirmation resolves expired and the tool never runs', async () => {
  const env = setup({ ttlMs: 1_000 });
  const [record] = (await propose(env)).confirmations;
  env.clock.now = record.expiresAt;
  const answer = await decide(env, resolveEvent(record.token, 'approve'));
  await env.settled();
  assert.ok(answer.streamed, 'the expiry is carried out (the model reads why the tool did not run)');
  assert.deepEqual(answer.last.payload.confirmations.map((c) => c.status), ['expired']);
  assert.equal((await env.tenant('acme').storage.stored('s1')).confirmations[0].status, 'expired');
  const again = await decide(env, resolveEvent(record.token, 'approve'));
  assert.deepEqual([again.status, again.body.confirmation.status], [200, 'expired']);
  assert.equal(env.runs.length, 0);
});

test("a token of another session or another tenant is a diagnostic and changes nothing", async () => {
  const env = setup();
  const [record] = (await propose(env)).confirmations;
  const before = await env.tenant('acme').storage.stored('s1');
  const notFound = { error: { version: 1, code: 'CONFIRMATION_NOT_FOUND', message: 'No such confirmation in this session.', retryable: false } };
  for (const [event, who] of [
    [resolveEvent(record.token, 'approve', { sessionId: 's2' }), 'acme'],
    [resolveEvent(record.token, 'approve'), 'globex'],
    [resolveEvent('confirm-unknown', 'approve'), 'acme'],
  ]) {
    const answer = await decide(env, event, who);
    assert.deepEqual([answer.status, answer.body], [404, notFound]);
  }
  assert.deepEqual(await env.tenant('acme').storage.stored('s1'), before);
  assert.equal(env.runs.length, 0);
  // Malformed decisions never reach storage.
  const bad = await env.post({ ...resolveEvent(record.token, 'approve'), payload: { token: record.token, decision: 'maybe' } });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.code, 'REQUEST_INVALID_EVENT');
  const unauthenticated = await env.handler(new Request('http://local/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(resolveEvent(record.token, 'approve')) }));
  assert.equal(unauthenticated.status, 401, 'authentication first');
});

test('a store that fails after the claim leaves a processing record; the handler reconciles it and the tool ran once', async () => {
  let failing = false;
  const env = setup({
    storageFor: () => {
      const inner = countingStorage(pkg);
      return {
        load: (id) => inner.load(id),
        save: async (snapshot, expected) => {
          if (failing) throw new Error('the store is down');
          const ok = await inner.save(snapshot, expected);
          // The claim went through: from now on the store is down.
          if (ok && snapshot.confirmations?.some((c) => c.status === 'approving')) failing = true;
          return ok;
        },
        stored: (id) => inner.stored(id),
      };
    },
  });
  const [record] = (await propose(env)).confirmations;
  const answer = await decide(env, resolveEvent(record.token, 'approve'));
  await env.settled();
  assert.ok(answer.streamed);
  assert.equal(answer.turn.diagnostics.at(-1)?.payload.code, 'SERVER_INTERNAL', 'the release could not be saved');
  assert.equal(env.runs.length, 1);
  failing = false;
  const storage = env.tenant('acme').storage;
  assert.equal((await storage.stored('s1')).confirmations[0].status, 'approving', 'an accurate processing record');
  const context = { tenant: 'acme' };
  assert.deepEqual(await env.handler.listStuckConfirmations('s1', { context }), [], 'not stuck while its lease is live');
  await assert.rejects(env.handler.reconcileConfirmation('s1', record.token, { context }), { code: 'CONFIRMATION_NOT_STUCK' });
  const meanwhile = await decide(env, resolveEvent(record.token, 'approve'));
  assert.deepEqual([meanwhile.status, meanwhile.body.confirmation.status], [202, 'approving']);
  env.clock.now += 10 * 60_000; // the continuation's lease lapses
  const stuck = await env.handler.listStuckConfirmations('s1', { context });
  assert.deepEqual(stuck.map((c) => [c.token, c.status]), [[record.token, 'approving']]);
  await assert.rejects(env.handler.reconcileConfirmation('s1', record.token, { context, resolution: 'pending' }), { code: 'CONFIRMATION_INVALID_RESOLUTION' });
  const done = await env.handler.reconcileConfirmation('s1', record.token, { context });
  assert.equal(done.status, 'approved');
  assert.deepEqual(await env.handler.listStuckConfirmations('s1', { context }), []);
  await assert.rejects(env.handler.reconcileConfirmation('s1', 'confirm-nope', { context }), { code: 'CONFIRMATION_NOT_FOUND' });
  const after = await decide(env, resolveEvent(record.token, 'approve'));
  assert.deepEqual([after.status, after.body.confirmation.status], [200, 'approved']);
  assert.equal(env.runs.length, 1, 'the tool ran at most once');
});

/** The statechart of tests/fixtures/session/v1_full.json's conversation, as defineChat takes it. */
const CHART = {
  initial: 'start',
  states: { start: { on: { refund_requested: 'collect_details' } }, collect_details: {} },
  routes: [{ id: 'refund', event: 'refund_requested', match: (input) => input.includes('refund'), response: () => 'Which order?' }],
};

async function storedV1(env) {
  const { readFile } = await import('node:fs/promises');
  const fixture = JSON.parse(await readFile(new URL('../fixtures/session/v1_full.json', import.meta.url), 'utf8'));
  const { activeTurn, ...rest } = fixture;
  const stored = { ...rest, sessionId: 's1', definitionId: 'demo', definitionRevision: 1 };
  assert.equal(await env.tenant('acme').storage.save(stored, undefined), true);
  return stored;
}

test('a stored v1 envelope with conversation state resumes; one the definition cannot accept gets its typed diagnostic', async () => {
  const withChart = setup({ conversation: CHART });
  const stored = await storedV1(withChart);
  const response = await withChart.post(submitEvent({ sessionId: 's1', turnId: 'fresh', input: 'hello' }));
  assert.equal(response.status, 200);
  await readTurn(pkg, response);
  await withChart.settled();
  const after = await withChart.tenant('acme').storage.stored('s1');
  assert.deepEqual(after.conversation, stored.conversation, 'carried unchanged');
  assert.deepEqual(after.confirmations, stored.confirmations);
  const incompatible = { error: { version: 1, code: 'SESSION_INCOMPATIBLE_DEFINITION', message: 'The stored session cannot be resumed by this chat definition.', retryable: false } };
  for (const conversation of [undefined, { ...CHART, states: { start: {}, collect_details: {} } }]) {
    const env = setup({ conversation });
    await storedV1(env);
    const refused = await env.post(submitEvent({ sessionId: 's1', turnId: 'fresh', input: 'hello' }));
    assert.deepEqual([refused.status, await refused.json()], [409, incompatible]);
  }
  // The same rule through resumeChatSession (AgentsKit's shape: a definition and a storage).
  const storage = { load: () => stored, save: () => true };
  const session = await resumeChatSession({ id: 'demo', revision: 1, conversation: CHART, chat: {} }, { sessionId: 's1', storage });
  assert.deepEqual(session.getConversationSnapshot(), stored.conversation);
  await assert.rejects(
    resumeChatSession({ id: 'demo', revision: 1, chat: {} }, { sessionId: 's1', storage }),
    (error) => error.code === 'AK_CONFIG_INVALID',
  );
});
