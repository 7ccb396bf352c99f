// The Durable Streams TanStack transport (@durable-streams/tanstack-ai-transport 0.0.9's
// `durableStreamConnection`, unchanged) under TanStack AI's own headless ChatClient, against
// turnkeep's routes: it POSTs `{ messages, data }` to createUIMessageChatHandler's
// `{api}/:id/messages` and reads the session log from createSessionLogHandler. And
// `{api}/:id/hydrate`, TanStack's hydration, read by a page that adds `hydrate` to that
// transport. The server is Node over memory session logs.
//
// - a turn: the user's message once (its id kept), the answer read from the log, sendMessage
//   resolving at the run's RUN_FINISHED; the same message sent again is a replay, not a turn;
// - an approval through addToolApprovalResponse (the transport drops TanStack's run context,
//   so the answered tool-call part says it) runs the tool once; a rejection never runs it;
// - a reload while an approval waits: hydrate's interrupts restore it, and it is answered;
// - bodies the route cannot use are the registry's diagnostic.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { ChatClient } from '@tanstack/ai-client';
import { durableStreamConnection } from '@durable-streams/tanstack-ai-transport';
import { resolveChatSnapshot } from '../../js/node.mjs';
import { startTanStackServer, textOf, toolPart, waitFor } from '../support/tanstack-server.mjs';

let server;
let base;
let pending;
let session;
const runs = []; // every execution of the transfer tool: its amount

before(async () => {
  server = await startTanStackServer({ chunkDelayMs: 5, onTransfer: (args) => runs.push(args.amount) });
  ({ base, pending, session } = server);
});

after(() => server?.close());

let ids = 0;
const newThreadId = () => `dt-${process.pid}-${++ids}`;

/**
 * A page on the stock transport; with `hydrate`, it also restores from `{api}/:id/hydrate`.
 * `initialOffset` is where the page's state was read (a server-rendered page's snapshot offset;
 * `-1` for a new session): without one the transport folds what it reads first into a snapshot,
 * and a send that races that first read loses its run's RUN_FINISHED into it.
 */
function page(threadId, { hydrate = false, initialOffset = '-1' } = {}) {
  const transport = durableStreamConnection({
    sendUrl: `${base}/api/chat/${threadId}/messages`,
    readUrl: `${base}/api/log/${threadId}`,
    initialOffset,
  });
  const connection = hydrate
    ? { ...transport, hydrate: (id) => fetch(`${base}/api/chat/${id}/hydrate`).then((r) => r.json()) }
    : transport;
  const client = new ChatClient({ connection, threadId, ...(hydrate ? { persistence: true } : {}) });
  return { client, close: () => client.dispose() };
}

const logOf = (id) => session(id).log.read({ offset: '-1', signal: AbortSignal.timeout(5_000) }).then((r) => r.items ?? r.chunks ?? r);

test('a turn: the user message once with its id, the answer read from the log; a resend is a replay', async () => {
  const id = newThreadId();
  const a = page(id);
  await a.client.sendMessage('hello');
  assert.equal(a.client.getStatus(), 'ready', a.client.getError()?.message);
  const messages = a.client.getMessages();
  assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant']);
  assert.equal(textOf(messages[0]), 'hello');
  assert.equal(textOf(messages[1]), 'echo: hello');
  await Promise.allSettled(pending);
  const saved = await session(id).memory.load({ signal: AbortSignal.timeout(5_000) });
  assert.equal(saved[0].id, messages[0].id, 'the client\'s message id is kept');

  const again = await fetch(`${base}/api/chat/${id}/messages`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ id: messages[0].id, role: 'user', parts: [{ type: 'text', content: 'hello' }] }], data: {} }),
  });
  assert.equal(again.status, 409, 'the same message is the same turn');
  assert.equal((await again.json()).error.code, 'TURN_REPLAYED');
  a.close();
});

test('an approval through addToolApprovalResponse runs the tool once; a rejection never runs it', async () => {
  const id = newThreadId();
  const a = page(id);
  await a.client.sendMessage('/confirm 21');
  const asking = toolPart(a.client);
  assert.equal(asking.state, 'approval-requested');
  await a.client.addToolApprovalResponse({ id: asking.approval.id, approved: true });
  await waitFor(() => toolPart(a.client).output !== undefined && a.client.getStatus() === 'ready');
  assert.match(JSON.stringify(toolPart(a.client).output), /transferred 21/);
  await Promise.allSettled(pending);
  assert.deepEqual(runs.filter((r) => r === 21), [21], 'the transfer ran once');
  a.close();

  const other = newThreadId();
  const b = page(other);
  await b.client.sendMessage('/confirm 22');
  await b.client.addToolApprovalResponse({ id: toolPart(b.client).approval.id, approved: false });
  await waitFor(() => b.client.getPendingInterrupts().length === 0 && b.client.getStatus() === 'ready');
  await Promise.allSettled(pending);
  const log = await logOf(other);
  assert.ok(log.some((c) => c.type === 'CUSTOM' && c.value?.status === 'rejected'), 'the record is rejected');
  assert.ok(!runs.includes(22), 'never ran');
  b.close();
});

test('{api}/:id/hydrate: a reload while an approval waits restores it, and it is answered', async () => {
  const id = newThreadId();
  const a = page(id);
  await a.client.sendMessage('/confirm 23');
  a.close();
  await Promise.allSettled(pending);

  const hydrated = await (await fetch(`${base}/api/chat/${id}/hydrate`)).json();
  assert.equal(hydrated.activeRun, null, 'a pending interrupt takes precedence');
  assert.deepEqual(hydrated.messages.map((m) => m.role), ['user', 'assistant']);
  const [interrupt] = hydrated.interrupts.pending;
  assert.equal(interrupt.reason, 'approval_required');

  const { offset } = await resolveChatSnapshot({ target: session(id).log });
  const b = page(id, { hydrate: true, initialOffset: offset });
  b.client.attach();
  await waitFor(() => b.client.getPendingInterrupts().length === 1);
  assert.equal(b.client.getPendingInterrupts()[0].id, interrupt.id);
  await b.client.addToolApprovalResponse({ id: interrupt.id, approved: true });
  await waitFor(() => toolPart(b.client).output !== undefined && b.client.getStatus() === 'ready');
  await Promise.allSettled(pending);
  assert.deepEqual(runs.filter((r) => r === 23), [23], 'the transfer ran once');
  b.close();
});

test('bodies the routes cannot use are the registry\'s diagnostics', async () => {
  const post = (path, body) => fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  for (const body of [
    { messages: [] },
    { messages: [{ role: 'user', parts: [{ type: 'text', content: 'no id' }] }] },
    { messages: [{ id: 'a1', role: 'assistant', parts: [{ type: 'text', content: 'nothing answered' }] }] },
  ]) {
    const response = await post('/api/chat/dt-bad/messages', body);
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.equal((await response.json()).error.code, 'REQUEST_INVALID_TANSTACK_SEND');
  }
  const put = await fetch(`${base}/api/chat/dt-bad/hydrate`, { method: 'POST' });
  assert.equal(put.status, 405);
});
