// The demo Worker in workerd as an AG-UI agent, judged by @ag-ui/client 1.0's HttpAgent (what
// CopilotKit's runtime and assistant-ui's AG-UI runtime run): POST /api/ui/chat with a
// RunAgentInput answers the run's events over SSE, each validated against AG-UI's schemas and
// its sequence verifier — a turn, and an approval answered with `resume` that runs the demo's
// transfer once (counted in the session's log).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { HttpAgent } from '@ag-ui/client';
import { removeDir, startWorker, tempDir } from './harness.mjs';

let worker;
let state;
const headers = { authorization: 'Bearer demo' };
const warnings = [];
const warn = console.warn;

before(async () => {
  console.warn = (...args) => warnings.push(args.map(String).join(' '));
  state = tempDir('turnkeep-agui-agent-');
  worker = await startWorker({ persistDir: state });
});
after(async () => {
  console.warn = warn;
  await worker?.stop();
  if (state) removeDir(state);
});

let threads = 0;
const newThreadId = () => `agw-${process.pid}-${++threads}`;

function agentWith(text) {
  const threadId = newThreadId();
  const agent = new HttpAgent({ url: `${worker.url}/api/ui/chat`, headers, threadId });
  agent.addMessage({ id: `u-${threadId}`, role: 'user', content: text });
  return { agent, threadId };
}

test('a turn: the user message once and the answer, nothing stripped', async () => {
  const { agent } = agentWith('hello');
  await agent.runAgent({});
  assert.deepEqual(agent.messages.map((m) => [m.role, m.content]), [['user', 'hello'], ['assistant', 'echo: hello']]);
  assert.deepEqual(warnings, []);
});

test('an approval answered with resume runs the transfer once', async () => {
  const { agent, threadId } = agentWith('/confirm 30');
  await agent.runAgent({});
  const [interrupt] = agent.pendingInterrupts;
  assert.equal(interrupt?.reason, 'approval_required');
  await agent.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
  assert.deepEqual(agent.pendingInterrupts, []);
  assert.match(agent.messages.find((m) => m.role === 'tool')?.content ?? '', /transferred/);
  const log = await (await fetch(`${worker.url}/api/chat/stream/${threadId}?offset=-1`, { headers })).json();
  assert.equal(log.filter((c) => c.type === 'TOOL_CALL_RESULT' && /transferred/.test(c.content ?? '')).length, 1, 'ran once');
  assert.deepEqual(warnings, []);
});
