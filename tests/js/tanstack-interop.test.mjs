// Interop with the real @durable-streams/tanstack-ai-transport (0.0.9) and @tanstack/ai (0.58.0),
// both ways, against the demo Worker in workerd (STREAMS_PUBLIC=1: the stream read directly) and
// against the reference Durable Streams server (@durable-streams/server, in this process):
//
// (a) a session turnkeep wrote (a real chat turn with a tool call through createChatHandler,
//     published through createDurableStreamsLog) read by the transport's
//     materializeSnapshotFromDurableStream and durableStreamConnection().subscribe(), and by
//     TanStack's own StreamProcessor, gives the messages turnkeep's resolveChatSnapshot gives;
// (b) a session the transport wrote (toDurableChatSessionResponse with a recorded @tanstack/ai
//     0.58 turn: text, a tool call and its result, a final answer) resolved by turnkeep gives the
//     messages the StreamProcessor and the transport give.
//
// What is compared is what both sides understand: message ids, roles and text everywhere; tool
// calls (id, name, input, output, state) and tool results with the StreamProcessor, the only
// reader of the two that knows them (the transport's materializer reads text only).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  durableStreamConnection,
  materializeSnapshotFromDurableStream,
  toDurableChatSessionResponse,
} from '@durable-streams/tanstack-ai-transport';
import { StreamProcessor } from '@tanstack/ai';

import {
  createChatHandler,
  createDemoModel,
  createDurableStreamsLog,
  createMemoryChatMemory,
  createMemorySessionStorage,
  defineChat,
  resolveChatSnapshot,
  toChatResponse,
} from '../../js/node.mjs';
import { chatRequest, submitEvent } from '../support/chat-harness.mjs';
import { postTurn } from '../workerd/harness.mjs';
import { startStreamServers } from '../support/stream-servers.mjs';

const TURN = JSON.parse(readFileSync(new URL('./fixtures/tanstack-0.58-turn.json', import.meta.url), 'utf8'));

let servers;

before(async () => {
  servers = await startStreamServers('interop');
});

after(async () => {
  await servers?.stop();
});

const unique = (label) => `${label}-${process.pid}-${Date.now().toString(36)}`;

/** Text of a UI message: its text parts joined. */
const textOf = (message) => (message.parts ?? []).filter((p) => p.type === 'text').map((p) => p.content).join('');

/** Ids, roles and text: what every reader understands. */
const understood = (messages) => messages.map((m) => ({ id: m.id, role: m.role, text: textOf(m) }));

/** Tool calls and results per message: what TanStack's processor and turnkeep both understand. */
const tools = (messages) =>
  messages.map((m) =>
    (m.parts ?? [])
      .filter((p) => p.type === 'tool-call' || p.type === 'tool-result')
      .map((p) =>
        p.type === 'tool-call'
          ? { type: p.type, id: p.id, name: p.name, input: p.input, output: p.output, state: p.state }
          : { type: p.type, toolCallId: p.toolCallId, content: p.content, state: p.state },
      ),
  );

/** Everything stored in the stream (one JSON array of chunks). */
async function storedChunks(url) {
  const response = await fetch(`${url}?offset=-1`);
  assert.equal(response.status, 200);
  return response.json();
}

/** TanStack's own reading of a chunk log: StreamProcessor, chunk by chunk, then finalized. */
function processed(chunks) {
  const processor = new StreamProcessor();
  for (const chunk of chunks) processor.processChunk(chunk);
  processor.finalizeStream();
  return processor.getMessages();
}

/** The transport's first-subscribe snapshot: the first item a fresh subscription yields. */
async function subscribedSnapshot(url) {
  const controller = new AbortController();
  const connection = durableStreamConnection({ sendUrl: url, readUrl: url });
  try {
    for await (const item of connection.subscribe(controller.signal)) {
      assert.equal(item.type, 'MESSAGES_SNAPSHOT');
      return item.messages;
    }
  } finally {
    controller.abort();
  }
  throw new Error('the subscription yielded nothing');
}

/** (a): every reader of a turnkeep-written stream agrees with turnkeep's own projection. */
async function checkTurnkeepWritten(url) {
  const ours = await resolveChatSnapshot({ target: { url } });
  const native = ours.nativeMessages;
  assert.deepEqual(
    understood(native),
    ours.messages.filter((m) => m.role !== 'tool').map((m) => ({ id: m.id, role: m.role, text: m.content })),
    'turnkeep: native messages and canonical messages agree',
  );
  assert.ok(tools(native).flat().some((p) => p.type === 'tool-call'), 'the turn made a tool call');

  const materialized = await materializeSnapshotFromDurableStream({ readUrl: url });
  assert.deepEqual(understood(materialized.messages), understood(native), 'materializeSnapshotFromDurableStream');
  assert.equal(materialized.offset, ours.offset, 'both end at the same offset');

  assert.deepEqual(understood(await subscribedSnapshot(url)), understood(native), 'durableStreamConnection().subscribe()');

  const tanstack = processed(await storedChunks(url));
  assert.deepEqual(understood(tanstack), understood(native), 'StreamProcessor: ids, roles, text');
  assert.deepEqual(tools(tanstack), tools(native), 'StreamProcessor: tool calls and results');
  return native;
}

/** (b): turnkeep reads a transport-written stream as TanStack and the transport do. */
async function checkTransportWritten(url) {
  async function* source() {
    for (const chunk of TURN.source) yield chunk;
  }
  const response = await toDurableChatSessionResponse({
    stream: { writeUrl: url },
    newMessages: [TURN.userMessage],
    responseStream: source(),
    mode: 'await',
  });
  assert.equal(response.status, 200);

  const ours = await resolveChatSnapshot({ target: { url } });
  const tanstack = processed(await storedChunks(url));
  assert.deepEqual(understood(ours.nativeMessages), understood(tanstack), 'ids, roles, text as StreamProcessor reads them');
  assert.deepEqual(tools(ours.nativeMessages), tools(tanstack), 'tool calls and results as StreamProcessor reads them');
  const materialized = await materializeSnapshotFromDurableStream({ readUrl: url });
  assert.deepEqual(understood(ours.nativeMessages), understood(materialized.messages), 'as the transport materializes it');
  assert.equal(ours.offset, materialized.offset);

  // The render parts: the tool card carries the call and its result.
  const card = ours.renderParts.find((p) => p.type === 'tool');
  assert.deepEqual([card.name, card.args, card.status], ['get_weather', { city: 'Paris' }, 'complete']);
  assert.match(card.result, /sunny/);
  return ours;
}

test('(a) Worker in workerd: a turnkeep chat turn with a tool call reads the same through the transport and TanStack', async () => {
  const sessionId = unique('tk-writes');
  const response = await postTurn(servers.workerUrl, 'interop', sessionId, '/tool cats');
  assert.equal(response.status, 200);
  await response.text();
  const native = await checkTurnkeepWritten(`${servers.workerUrl}/v1/stream/chat/interop/${sessionId}`);
  assert.deepEqual(native.map((m) => m.role), ['user', 'assistant', 'assistant']);
});

/** A chat turn through createChatHandler in Node, published to `url`; `execute` is the lookup tool's. */
async function nodeTurn(url, execute) {
  const lookup = {
    name: 'lookup',
    description: 'Looks a query up.',
    parameters: { type: 'object', properties: { query: { type: 'string' } } },
    execute,
  };
  const chat = defineChat({
    id: 'interop',
    revision: 1,
    model: createDemoModel({ chunkDelayMs: 0 }),
    memory: createMemoryChatMemory(),
    tools: [lookup],
  });
  const kept = [];
  const handler = createChatHandler({
    resolveDefinition: () => chat,
    sessionStorage: () => createMemorySessionStorage(),
    sessionLog: () => createDurableStreamsLog({ url }),
  });
  const response = await handler(chatRequest(submitEvent({ sessionId: 'ref-s1', input: '/tool cats' })), {
    waitUntil: (p) => kept.push(p),
  });
  assert.equal(response.status, 200);
  await response.text();
  await Promise.all(kept);
}

test('(a) reference server: a turnkeep chat turn with a tool call reads the same through the transport and TanStack', async () => {
  const url = `${servers.referenceUrl}/v1/stream/${unique('tk-writes')}`;
  await nodeTurn(url, ({ query }) => `result for ${query}`);
  const native = await checkTurnkeepWritten(url);
  assert.deepEqual(tools(native)[1].map((p) => [p.type, p.state]), [['tool-call', 'complete'], ['tool-result', 'complete']]);
});

test('(a) reference server: a tool that fails reads as the same error through TanStack', async () => {
  const url = `${servers.referenceUrl}/v1/stream/${unique('tk-fails')}`;
  await nodeTurn(url, () => {
    throw new Error('lookup service down');
  });
  const native = await checkTurnkeepWritten(url);
  const [call, result] = tools(native)[1];
  assert.equal(call.state, 'error');
  assert.ok(call.output && typeof call.output.error === 'string', 'the output carries the error');
  assert.equal(result.state, 'error');
});

test('(b) Worker in workerd: a session written by the transport resolves in turnkeep as TanStack reads it', async () => {
  await checkTransportWritten(`${servers.workerUrl}/v1/stream/${unique('ts-writes')}`);
});

test('(b) reference server: a session written by the transport resolves in turnkeep as TanStack reads it', async () => {
  const ours = await checkTransportWritten(`${servers.referenceUrl}/v1/stream/${unique('ts-writes')}`);
  assert.deepEqual(ours.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
});

test('toChatResponse (reference server): its echoes, native batch and the 0.58 turn read the same through the transport and TanStack', async () => {
  const url = `${servers.referenceUrl}/v1/stream/${unique('tk-respond')}`;
  const image = { type: 'image', source: { type: 'url', value: 'https://example.test/paris.png' } };
  const user = { ...TURN.userMessage, parts: [...TURN.userMessage.parts, image], metadata: { origin: 'interop' } };
  async function* source() {
    for (const chunk of TURN.source) yield chunk;
  }
  const response = await toChatResponse({
    target: { url },
    authorize: false,
    newMessages: [user],
    source: source(),
    mode: 'await',
    producer: { id: 'chat-turn:interop:t1', epoch: 1 },
  });
  assert.equal(response.status, 200);
  const ours = await resolveChatSnapshot({ target: { url } });
  const tanstack = processed(await storedChunks(url));
  assert.deepEqual(understood(ours.nativeMessages), understood(tanstack));
  assert.deepEqual(tools(ours.nativeMessages), tools(tanstack));
  assert.deepEqual(tanstack[0].parts, user.parts, 'TanStack keeps the native parts of the batch');
  assert.deepEqual(ours.nativeMessages[0], user, 'so does turnkeep');
  const materialized = await materializeSnapshotFromDurableStream({ readUrl: url });
  assert.deepEqual(understood(materialized.messages), understood(tanstack));
  assert.deepEqual(materialized.messages[0].parts, user.parts);
});
