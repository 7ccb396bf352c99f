// toTanStackConnection (turnkeep/client) under TanStack AI's own headless client
// (@tanstack/ai-client 0.33's ChatClient, the class useChat wraps), over a page's one
// createChatConnection. The server is Node: createUIMessageChatHandler at /api/chat (taking the
// AG-UI RunAgentInput the adapter posts) and createSessionLogHandler at /api/log/:id, both over
// the same memory session logs.
//
// - a turn: the client's user message once (its id kept by the server), the answer streamed
//   through the live subscription, sendMessage resolving at the run's RUN_FINISHED;
// - a page that opens mid-answer hydrates from its seed and joins the run from the seed's
//   offset over its one read: every word once, no duplicate message; with useChat's live
//   subscription open too (`live: true`), still once (the subscription leaves the joined run to
//   the join), and the next turn comes through the subscription;
// - an approval through addToolApprovalResponse (the log's interrupt is one TanStack resolves)
//   runs the tool once; a rejection never runs it;
// - a page opened while an approval waits restores it (hydrate's interrupts) and answers it;
// - stop() from another tab ends the answer here;
// - a RunAgentInput the route cannot use is the registry's diagnostic.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { ChatClient } from '@tanstack/ai-client';
import { resolveChatSnapshot } from '../../js/node.mjs';
import { createChatConnection, toTanStackConnection } from '../../js/client/node.mjs';
import { startTanStackServer, textOf, toolPart, waitFor } from '../support/tanstack-server.mjs';

let server;
let base;
let pending;
let session;
before(async () => {
  server = await startTanStackServer({ chunkDelayMs: 10 });
  ({ base, pending, session } = server);
});

after(() => server?.close());

let ids = 0;
const newThreadId = () => `ts-${process.pid}-${++ids}`;
const words = (n) => Array.from({ length: n }, (_, i) => `w${i + 1}`).join(' ');

/** A page: its one connection (recording its reads), the adapter, TanStack's client. */
function page(threadId, { seed, persistence = false, live = false } = {}) {
  const reads = [];
  const connection = createChatConnection({
    target: { url: `${base}/api/log/${threadId}` },
    initialMessages: seed?.messages,
    initialOffset: seed?.offset ?? undefined,
    initialRunId: seed?.activeRunId ?? undefined,
    fetch: (request) => {
      reads.push(request.url);
      return fetch(request);
    },
  });
  const adapter = toTanStackConnection(connection, { api: `${base}/api/chat`, threadId });
  const client = new ChatClient({ connection: adapter, threadId, ...(persistence ? { persistence: true } : {}) });
  if (live) client.subscribe(); // what useChat({ live: true }) does on mount
  return {
    connection, adapter, client, reads,
    close: () => {
      client.dispose();
      connection.dispose();
    },
  };
}

const logOf = (id) => session(id).log.read({ offset: '-1', signal: AbortSignal.timeout(5_000) }).then((r) => r.items ?? r.chunks ?? r);

test('a turn: the user message once with its client id, the answer through the subscription', async () => {
  const id = newThreadId();
  const a = page(id);
  await a.client.sendMessage('hello');
  assert.equal(a.client.getStatus(), 'ready', a.client.getError()?.message);
  const messages = a.client.getMessages();
  assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant']);
  assert.equal(textOf(messages[0]), 'hello', 'the echo is not appended to the user message');
  assert.equal(textOf(messages[1]), 'echo: hello');
  await Promise.allSettled(pending);
  const saved = await session(id).memory.load({ signal: AbortSignal.timeout(5_000) });
  assert.equal(saved[0].id, messages[0].id, 'the client\'s message id is kept');
  assert.equal(saved[1].id, messages[1].id);
  a.close();
});

test('a page opened mid-answer hydrates and joins the run from its seed\'s offset: every word once', async () => {
  const id = newThreadId();
  const a = page(id);
  const sending = a.client.sendMessage('/words 100');
  await waitFor(() => textOf(a.client.getMessages()[1]).includes('w10'));
  const seed = await resolveChatSnapshot({ target: session(id).log });
  assert.ok(seed.activeRunId, 'the turn runs');
  const b = page(id, { seed, persistence: true });
  b.client.attach();
  await waitFor(() => b.client.getIsLoading());
  await waitFor(() => !b.client.getIsLoading());
  const messages = b.client.getMessages();
  assert.equal(messages.length, 2, 'no duplicate message');
  assert.equal(textOf(messages[1]), words(100));
  // One read from the seed's offset; a read the server closed (its live-read limit, reached when
  // a loaded machine slows the run) resumes from where it stopped, never from before the seed.
  const offsets = b.reads.map((url) => new URL(url).searchParams.get('offset'));
  assert.equal(offsets[0], seed.offset, `from the seed's offset, not a replay: ${b.reads.join(', ')}`);
  for (let i = 1; i < offsets.length; i += 1) assert.ok(offsets[i] > offsets[i - 1], `each resumed read starts further on: ${b.reads.join(', ')}`);
  await sending;
  assert.equal(textOf(a.client.getMessages()[1]), words(100));
  a.close();
  b.close();
});

test('a live page (useChat({ live, persistence })) opened mid-answer: the join and the live subscription apply each word once', async () => {
  const id = newThreadId();
  const a = page(id, { live: true });
  const sending = a.client.sendMessage('/words 100');
  await waitFor(() => textOf(a.client.getMessages()[1]).includes('w10'));
  const seed = await resolveChatSnapshot({ target: session(id).log });
  assert.ok(seed.activeRunId, 'the turn runs');
  const b = page(id, { seed, persistence: true, live: true });
  b.client.attach();
  await waitFor(() => b.client.getIsLoading());
  await waitFor(() => !b.client.getIsLoading());
  assert.deepEqual(b.client.getMessages().map((m) => m.role), ['user', 'assistant'], 'no duplicate message');
  assert.equal(textOf(b.client.getMessages()[1]), words(100), 'every word once');
  await sending;
  // The next turn (sent from the other page) comes through b's live subscription, once.
  await a.client.sendMessage('/words 5');
  await waitFor(() => b.client.getMessages().length === 4);
  await waitFor(() => textOf(b.client.getMessages()[3]) === words(5));
  assert.deepEqual(b.client.getMessages().map(textOf), ['/words 100', words(100), '/words 5', words(5)]);
  a.close();
  b.close();
});

test('an approval through addToolApprovalResponse runs the tool once; a rejection never runs it', async () => {
  const id = newThreadId();
  const a = page(id);
  await a.client.sendMessage('/confirm 5');
  const asking = toolPart(a.client);
  assert.equal(asking.state, 'approval-requested');
  const [interrupt] = a.client.getPendingInterrupts();
  assert.equal(interrupt?.canResolve, true, 'TanStack can answer the log\'s interrupt');
  await a.client.addToolApprovalResponse({ id: asking.approval.id, approved: true });
  await waitFor(() => toolPart(a.client).output !== undefined && a.client.getStatus() === 'ready');
  assert.match(JSON.stringify(toolPart(a.client).output), /transferred/);
  const results = (await logOf(id)).filter((c) => c.type === 'TOOL_CALL_RESULT');
  assert.equal(results.length, 1, 'the transfer ran once');
  a.close();

  const other = newThreadId();
  const b = page(other);
  await b.client.sendMessage('/confirm 5');
  await b.client.addToolApprovalResponse({ id: toolPart(b.client).approval.id, approved: false });
  await waitFor(() => b.client.getPendingInterrupts().length === 0 && b.client.getStatus() === 'ready');
  await Promise.allSettled(pending);
  const log = await logOf(other);
  assert.ok(log.some((c) => c.type === 'CUSTOM' && c.value?.status === 'rejected'), 'the record is rejected');
  assert.ok(!log.some((c) => c.type === 'TOOL_CALL_RESULT' && /transferred/.test(c.content ?? '')), 'never ran');
  b.close();
});

test('a page opened while an approval waits restores it from hydrate and answers it', async () => {
  const id = newThreadId();
  const a = page(id);
  await a.client.sendMessage('/confirm 7');
  a.close();
  await Promise.allSettled(pending);
  const seed = await resolveChatSnapshot({ target: session(id).log });
  const b = page(id, { seed, persistence: true });
  b.client.attach();
  await waitFor(() => b.client.getPendingInterrupts().length === 1);
  const [waiting] = b.client.getPendingInterrupts();
  assert.equal(waiting.id, `confirm-${toolPart(b.client).id}`, 'the interrupt is the call\'s confirmation');
  assert.equal(b.client.getMessages().length, 2);
  await b.client.addToolApprovalResponse({ id: waiting.id, approved: true });
  await waitFor(() => toolPart(b.client).output !== undefined && b.client.getStatus() === 'ready');
  assert.match(JSON.stringify(toolPart(b.client).output), /transferred/);
  b.close();
});

test('stop() from another tab ends the answer here', async () => {
  const id = newThreadId();
  const a = page(id);
  const b = page(id);
  const sending = a.client.sendMessage('/words 2000');
  await waitFor(() => /\bw5\b/.test(textOf(a.client.getMessages()[1])));
  const answer = await b.adapter.stop();
  assert.equal(answer.state, 'stopping');
  await sending;
  assert.equal(a.client.getStatus(), 'ready');
  assert.doesNotMatch(textOf(a.client.getMessages()[1]), /w2000/);
  a.close();
  b.close();
});

test('a RunAgentInput the route cannot use is the registry\'s diagnostic', async () => {
  for (const [body, code] of [
    [{ threadId: 'bad id', runId: 'r1', messages: [{ id: 'u', role: 'user', content: 'x' }] }, 'REQUEST_INVALID_RUN_INPUT'],
    [{ threadId: 't1', runId: 'r1', messages: [{ id: 'a', role: 'assistant', content: 'x' }] }, 'REQUEST_INVALID_RUN_INPUT'],
    [{ threadId: 't1', runId: 'r1', messages: [], resume: [{ interruptId: 'confirm-x', status: 'maybe' }] }, 'REQUEST_INVALID_RUN_INPUT'],
  ]) {
    const response = await fetch(`${base}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.equal((await response.json()).error.code, code);
  }
});

test('the connection\'s authorize is asked for the adapter\'s own posts: a refusal sends nothing', async () => {
  const threadId = newThreadId();
  const asked = [];
  let allow = false;
  const connection = createChatConnection({
    target: { url: `${base}/api/log/${threadId}`, sessionId: threadId },
    authorize: (request, sessionId) => {
      asked.push([request.method, new URL(request.url).pathname, sessionId]);
      return allow;
    },
  });
  const adapter = toTanStackConnection(connection, { api: `${base}/api/chat`, threadId });
  const message = { id: 'u-auth', role: 'user', parts: [{ type: 'text', content: 'hello' }] };
  await assert.rejects(adapter.send([message], undefined, undefined, { runId: 'run-auth-1' }), (e) => e.code === 'SESSION_FORBIDDEN');
  assert.deepEqual(asked, [['POST', '/api/chat', threadId]]);
  assert.deepEqual(await session(threadId).memory.load({ signal: AbortSignal.timeout(5_000) }), [], 'nothing reached the route');
  allow = true;
  await adapter.send([message], undefined, undefined, { runId: 'run-auth-2' });
  await Promise.allSettled(pending);
  const saved = await session(threadId).memory.load({ signal: AbortSignal.timeout(5_000) });
  assert.equal(saved[0]?.id, 'u-auth', 'allowed, the same post goes through');
  connection.dispose();
});
