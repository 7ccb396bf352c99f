// createUIMessageChatHandler as an AG-UI agent endpoint, judged by @ag-ui/client 1.0's own
// HttpAgent (what CopilotKit's runtime and assistant-ui's AG-UI runtime run): it POSTs a
// RunAgentInput and validates every event of the SSE answer against AG-UI's schemas and its
// sequence verifier. The server is Node, the handler over memory session logs.
//
// - a turn: the agent's messages end with its user message once and the answer, nothing
//   stripped or refused (HttpAgent warns for every key outside the spec);
// - a tool call with its result;
// - reasoning, as AG-UI 1.0's reasoning spans (a `reasoning` message in the agent's messages);
// - an approval: the run ends with an interrupt HttpAgent keeps pending; a run with `resume`
//   approving it runs the tool once; another thread's rejection never runs it;
// - a client that follows the log itself asks for JSON and gets 202.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';

import { HttpAgent } from '@ag-ui/client';
import * as pkg from '../../js/node.mjs';

const {
  createUIMessageChatHandler, createDemoModel, createMemoryChatMemory, createMemorySessionLog,
  createMemorySessionStorage, defineChat, toNodeHandler,
} = pkg;

let server;
let url;
const sessions = new Map();
const pending = [];
const runs = []; // every execution of the transfer tool

const transfer = {
  name: 'transfer',
  description: 'Moves money; a person approves it first.',
  parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
  requiresConfirmation: true,
  async execute(args) {
    runs.push(args.amount);
    return `transferred ${args.amount}`;
  },
};
const lookup = {
  name: 'lookup',
  description: 'Looks a thing up.',
  parameters: { type: 'object', properties: { query: { type: 'string' } } },
  execute: async ({ query }) => `result for ${query}`,
};

function session(id) {
  if (!sessions.has(id)) sessions.set(id, { memory: createMemoryChatMemory(), log: createMemorySessionLog() });
  return sessions.get(id);
}

// HttpAgent strips what its schemas do not know with a console warning, and drops what they
// refuse: a warning is a failure here.
const warnings = [];
const warn = console.warn;

before(async () => {
  console.warn = (...args) => warnings.push(args.map(String).join(' '));
  const storage = createMemorySessionStorage();
  const chat = createUIMessageChatHandler({
    resolveDefinition: (_c, id) => defineChat({ id: 'demo', revision: 1, model: createDemoModel({ chunkDelayMs: 5 }), memory: session(id).memory, tools: [lookup, transfer] }),
    sessionStorage: () => storage,
    sessionLog: (_c, id) => session(id).log,
  });
  const host = { waitUntil: (p) => pending.push(p) };
  server = createServer(toNodeHandler((r) => chat(r, host)));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${server.address().port}/api/chat`;
});

after(async () => {
  console.warn = warn;
  await Promise.allSettled(pending);
  server?.close();
  server?.closeAllConnections?.();
});

let ids = 0;
const newThreadId = () => `ag-${process.pid}-${++ids}`;

/** An agent on a new thread, with the user's message added; the events it saw. */
function agentWith(text, threadId = newThreadId()) {
  const agent = new HttpAgent({ url, threadId });
  agent.addMessage({ id: `u-${threadId}`, role: 'user', content: text });
  const events = [];
  const subscriber = { onEvent: ({ event }) => void events.push(event) };
  return { agent, events, subscriber, threadId };
}

test('a turn: the user message once, the answer, every event valid AG-UI', async () => {
  const { agent, events, subscriber } = agentWith('hello');
  await agent.runAgent({}, subscriber);
  assert.deepEqual(agent.messages.map((m) => [m.role, m.content]), [['user', 'hello'], ['assistant', 'echo: hello']]);
  assert.equal(events[0].type, 'RUN_STARTED');
  assert.equal(events.at(-1).type, 'RUN_FINISHED');
  assert.deepEqual(warnings, [], 'nothing stripped');
});

test('reasoning: the model\'s thinking as a reasoning message before the answer', async () => {
  const { agent, events, subscriber } = agentWith('/think cats');
  await agent.runAgent({}, subscriber);
  assert.deepEqual(agent.messages.map((m) => [m.role, m.content]), [
    ['user', '/think cats'], ['reasoning', 'Thinking about cats.'], ['assistant', 'answer: cats'],
  ]);
  const kinds = events.map((e) => e.type).filter((t) => t.startsWith('REASONING'));
  assert.deepEqual(kinds.slice(0, 2), ['REASONING_START', 'REASONING_MESSAGE_START']);
  assert.deepEqual(kinds.slice(-2), ['REASONING_MESSAGE_END', 'REASONING_END']);
  assert.deepEqual(warnings, [], 'nothing stripped');
});

test('a tool call and its result', async () => {
  const { agent } = agentWith('/tool cats');
  await agent.runAgent({});
  const [, call, result, answer] = agent.messages;
  assert.equal(call.toolCalls[0].function.name, 'lookup');
  assert.deepEqual(JSON.parse(call.toolCalls[0].function.arguments), { query: 'cats' });
  assert.deepEqual([result.role, result.toolCallId, result.content], ['tool', call.toolCalls[0].id, 'result for cats']);
  assert.equal(answer.content, 'found: result for cats');
  assert.deepEqual(warnings, []);
});

test('an approval: the interrupt stays pending; a resume that approves runs the tool once; a rejection never runs it', async () => {
  const { agent } = agentWith('/confirm 12');
  await agent.runAgent({});
  const [interrupt] = agent.pendingInterrupts;
  assert.equal(interrupt.reason, 'approval_required');
  assert.equal(interrupt.metadata.toolName, 'transfer');
  await assert.rejects(agent.runAgent({}), /pending interrupt/, 'HttpAgent refuses to go on without an answer');
  const before = runs.length;
  await agent.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
  assert.deepEqual(runs.slice(before), [12], 'the transfer ran once');
  assert.deepEqual(agent.pendingInterrupts, []);
  const result = agent.messages.find((m) => m.role === 'tool');
  assert.equal(result.content, 'transferred 12');

  const other = agentWith('/confirm 13');
  await other.agent.runAgent({});
  const [asked] = other.agent.pendingInterrupts;
  await other.agent.runAgent({ resume: [{ interruptId: asked.id, status: 'cancelled' }] });
  assert.ok(!runs.includes(13), 'never ran');
  assert.deepEqual(other.agent.pendingInterrupts, []);
  assert.deepEqual(warnings, []);
});

test('a client that follows the log itself asks for JSON and gets 202', async () => {
  const threadId = newThreadId();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ threadId, runId: 'run-json-1', messages: [{ id: 'u1', role: 'user', content: 'hi' }], tools: [], context: [], state: {}, forwardedProps: {} }),
  });
  assert.equal(response.status, 202);
  assert.deepEqual(await response.json(), { threadId, runId: 'run-json-1' });
});

test('10 identical resumes at once: one decision, the transfer runs once, every answer follows that run', async () => {
  const { agent, threadId } = agentWith('/confirm 14');
  await agent.runAgent({});
  const [interrupt] = agent.pendingInterrupts;
  const body = JSON.stringify({
    threadId, runId: 'run-resume', messages: agent.messages, tools: [], context: [], state: {}, forwardedProps: {},
    resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }],
  });
  const post = (accept) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body });
  const before = runs.length;
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post(i % 2 ? 'application/json' : 'text/event-stream')));
  for (const [i, response] of answers.entries()) {
    if (i % 2) {
      assert.equal(response.status, 202);
      assert.equal((await response.json()).runId, interrupt.id, 'the continuation is the token\'s run');
      continue;
    }
    assert.equal(response.status, 200);
    const events = (await response.text()).split('\n\n').filter(Boolean).map((e) => JSON.parse(e.replace(/^data: /, '')));
    assert.equal(events[0].type, 'RUN_STARTED');
    assert.equal(events[0].runId, interrupt.id);
    assert.deepEqual(events.at(-1), { ...events.at(-1), type: 'RUN_FINISHED', outcome: { type: 'success' } });
    assert.ok(events.some((e) => e.type === 'TOOL_CALL_RESULT' && e.content === 'transferred 14'), `answer ${i}`);
  }
  await Promise.allSettled(pending);
  assert.deepEqual(runs.slice(before), [14], 'the transfer ran once');
});
