// The demo Worker's AI SDK routes (/api/ui/chat) in workerd, on the demo's defaults, judged by
// the AI SDK's own client (ai 7): the stock DefaultChatTransport({ api: '/api/ui/chat' }) works
// unchanged — a turn, a reload that resumes mid-answer with every word once, a stop from another
// client, one answer of 5 simultaneous sends, an approval whose 20 identical resubmits run the
// demo's transfer once (counted in the session's log), a rejection.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { TestChat, textOf, waitFor, words } from '../support/ai-sdk.mjs';
import { removeDir, startWorker, tempDir } from './harness.mjs';

let worker;
let state;
const headers = { authorization: 'Bearer demo' };

before(async () => {
  state = tempDir('turnkeep-ui-chat-');
  worker = await startWorker({ persistDir: state });
});
after(async () => {
  await worker?.stop();
  if (state) removeDir(state);
});

let chats = 0;
const newChatId = () => `ui-${process.pid}-${++chats}`;
const transport = () => new DefaultChatTransport({ api: `${worker.url}/api/ui/chat`, headers });
const chatFor = (id, init = {}) => new TestChat({ id, transport: transport(), ...init });

/** The session's log as the demo's chat-stream route serves it (catch-up). */
async function logOf(id) {
  const response = await fetch(`${worker.url}/api/chat/stream/${id}?offset=-1`, { headers });
  return response.json();
}

test('a turn through the stock transport; the UI message is the stored answer', async () => {
  const id = newChatId();
  const chat = chatFor(id);
  await chat.sendMessage({ text: '/tool cats' });
  assert.equal(chat.status, 'ready', chat.error?.message);
  const part = chat.messages[1].parts.find((p) => p.type === 'tool-lookup');
  assert.equal(part.state, 'output-available');
  assert.equal(part.output, 'result for cats');
  assert.equal(textOf(chat.messages[1]), 'found: result for cats');
  const view = await (await fetch(`${worker.url}/api/sessions/${id}`, { headers })).json();
  assert.equal(view.messages[0].id, chat.messages[0].id, 'the client\'s message id is kept');
  const { messages } = await (await fetch(`${worker.url}/api/ui/chat/${id}/messages`, { headers })).json();
  assert.deepEqual(messages.map((m) => m.id), chat.messages.map((m) => m.id));
});

test('a reload mid-answer resumes with every word once; then there is nothing to resume', async () => {
  const id = newChatId();
  const first = chatFor(id);
  const sending = first.sendMessage({ text: '/words 150' });
  await waitFor(() => textOf(first.messages[1]).includes('w10'));
  await first.stop();
  await sending;
  const second = chatFor(id, { messages: structuredClone(first.messages) });
  await second.resumeStream();
  assert.equal(second.status, 'ready', second.error?.message);
  assert.equal(second.messages.length, 2);
  assert.equal(textOf(second.messages[1]), words(150));
  assert.equal(await transport().reconnectToStream({ chatId: id }), null, '204 once the turn ended');
});

test('a stop from another client ends the stream within a second and keeps the partial answer', async () => {
  const id = newChatId();
  const chat = chatFor(id);
  const sending = chat.sendMessage({ text: '/words 2000' });
  await waitFor(() => /\bw5\b/.test(textOf(chat.messages[1])));
  const stopped = Date.now();
  const answer = await fetch(`${worker.url}/api/ui/chat/${id}/stop`, { method: 'POST', headers });
  assert.equal(answer.status, 202);
  await sending;
  assert.ok(Date.now() - stopped < 1_000, `ended ${Date.now() - stopped} ms after the stop`);
  assert.equal(chat.status, 'ready');
  assert.doesNotMatch(textOf(chat.messages[1]), /w2000/);
});

test('5 simultaneous sends: one answer, four 409 SESSION_BUSY', async () => {
  const id = newChatId();
  const clients = Array.from({ length: 5 }, () => chatFor(id));
  await Promise.all(clients.map((c, i) => c.sendMessage({ text: `/words ${30 + i}` })));
  const refused = clients.filter((c) => c.status === 'error');
  assert.equal(clients.filter((c) => c.status === 'ready').length, 1);
  assert.equal(refused.length, 4);
  for (const c of refused) assert.equal(JSON.parse(c.error.message).error.code, 'SESSION_BUSY');
});

test('an approval: 20 identical resubmits at once run the transfer once; a rejection never runs it', async () => {
  const id = newChatId();
  const chat = chatFor(id);
  await chat.sendMessage({ text: '/confirm 20' });
  const asking = chat.messages[1].parts.find((p) => p.type === 'tool-transfer');
  assert.equal(asking.state, 'approval-requested');
  const answered = structuredClone(chat.messages);
  Object.assign(answered[1].parts.find((p) => p.type === 'tool-transfer'), { state: 'approval-responded', approval: { id: asking.approval.id, approved: true } });
  const clients = Array.from({ length: 20 }, () => chatFor(id, { messages: structuredClone(answered) }));
  await Promise.all(clients.map((c) => c.sendMessage()));
  for (const c of clients) {
    assert.equal(c.status, 'ready', c.error?.message);
    assert.equal(c.messages.length, 2);
    assert.equal(c.messages[1].parts.find((p) => p.type === 'tool-transfer').state, 'output-available');
  }
  const results = (await logOf(id)).filter((c) => c.type === 'TOOL_CALL_RESULT' && c.toolCallId === asking.toolCallId);
  assert.equal(results.length, 1, 'the transfer ran once');

  const other = newChatId();
  const rejecting = chatFor(other, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
  await rejecting.sendMessage({ text: '/confirm 5' });
  const part = rejecting.messages[1].parts.find((p) => p.type === 'tool-transfer');
  await rejecting.addToolApprovalResponse({ id: part.approval.id, approved: false });
  await waitFor(() => rejecting.status === 'ready' && rejecting.messages[1].parts.some((p) => p.type === 'tool-transfer' && p.state === 'output-denied'));
  const log = await logOf(other);
  assert.ok(!log.some((c) => c.type === 'TOOL_CALL_RESULT' && /transferred/.test(c.content ?? '')), 'never ran');
});
