// Renderers verify identity (the seed's ADR-0011): `ChatProjection`, `renderChatHtml` /
// `renderChatMessages` and `createChatConnection`, prepared for one session and definition
// revision, refuse a chunk or a seed of another session or revision with a named diagnostic and
// render nothing. The rule is Rust's (`core::projection::identity`); these are its JS shells.
// Also the seed's connection contract: `{ sessionId, baseUrl? }` targets, `authorize`, a whole
// seed, and the seed → live law through the real wasm at every cut of a stored log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';

import {
  ChatProjection,
  createChatConnection,
  projectChatSnapshot,
  renderChatHtml,
  renderChatMessages,
} from '../../js/client/node.mjs';
import { createMemorySessionLog, resolveChatSnapshot } from '../../js/node.mjs';

const LOG = [
  { type: 'RUN_STARTED', runId: 't1', threadId: 's1', timestamp: 1 },
  { type: 'TEXT_MESSAGE_START', messageId: 'a1', role: 'assistant', timestamp: 2 },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: 'mine', timestamp: 3 },
  { type: 'TEXT_MESSAGE_END', messageId: 'a1', timestamp: 4 },
  { type: 'RUN_FINISHED', runId: 't1', threadId: 's1', timestamp: 5 },
];
const FOREIGN_RUN = { type: 'RUN_STARTED', runId: 'x1', threadId: 'other-session', timestamp: 6 };
const PREPARED = { sessionId: 's1', definitionRevision: 2 };

const refused = (code) => (error) => {
  assert.equal(error.name, 'ChatIdentityError');
  assert.equal(error.code, code);
  assert.deepEqual(Object.keys(error.diagnostic), ['version', 'code', 'message', 'retryable']);
  assert.equal(error.diagnostic.version, 1);
  return true;
};

test("ChatProjection refuses a foreign session's chunk and projects nothing of it", () => {
  const projection = new ChatProjection([], PREPARED);
  projection.feedAll(LOG);
  const before = projection.snapshot();
  assert.throws(() => projection.feed(FOREIGN_RUN), refused('RENDER_FOREIGN_SESSION'));
  // One foreign chunk refuses a whole batch: nothing of it is projected.
  const foreignText = { type: 'TEXT_MESSAGE_START', messageId: 'x-msg', role: 'assistant', sessionId: 'other-session' };
  assert.throws(() => projection.feedAll([{ type: 'TEXT_MESSAGE_START', messageId: 'a2', role: 'assistant' }, foreignText]), refused('RENDER_FOREIGN_SESSION'));
  assert.deepEqual(projection.snapshot(), before);
  assert.equal(projection.snapshot().activeRunId, null);
  // Its own session's chunks, and chunks naming no session, still go in.
  projection.feed({ type: 'RUN_STARTED', runId: 't2', threadId: 's1' });
  assert.equal(projection.activeRunId, 't2');
  // Unprepared, the same chunk is fed (backwards compatible).
  const open = new ChatProjection();
  open.feed(FOREIGN_RUN);
  assert.equal(open.activeRunId, 'x1');
});

test("ChatProjection and renderChatHtml refuse a newer revision's snapshot; nothing is rendered", () => {
  const seed = { ...projectChatSnapshot(LOG), sessionId: 's1', definitionRevision: 2 };
  const newer = { ...seed, definitionRevision: 3 };
  const foreign = { ...seed, sessionId: 'other-session' };
  // The prepared seed is accepted whole.
  const projection = new ChatProjection(seed, PREPARED);
  assert.deepEqual(projection.snapshot().messages, seed.messages);
  assert.match(renderChatHtml(seed, PREPARED), /mine/);
  assert.deepEqual(renderChatMessages(seed, PREPARED), renderChatMessages(seed.renderParts));
  // A newer revision's, or another session's, is refused by every renderer.
  assert.throws(() => new ChatProjection(newer, PREPARED), refused('RENDER_REVISION_MISMATCH'));
  assert.throws(() => renderChatHtml(newer, PREPARED), refused('RENDER_REVISION_MISMATCH'));
  assert.throws(() => renderChatMessages(newer, PREPARED), refused('RENDER_REVISION_MISMATCH'));
  assert.throws(() => renderChatHtml(foreign, PREPARED), refused('RENDER_FOREIGN_SESSION'));
  assert.throws(() => new ChatProjection(foreign, PREPARED), refused('RENDER_FOREIGN_SESSION'));
  // A chunk stamped with another revision too.
  assert.throws(() => projection.feed({ type: 'RUN_STARTED', runId: 't3', threadId: 's1', definitionRevision: 3 }), refused('RENDER_REVISION_MISMATCH'));
  // Render parts as before: nothing to check, rendered as ever.
  assert.equal(renderChatHtml(seed.renderParts), renderChatHtml(seed));
  assert.throws(() => new ChatProjection([], { definitionRevision: 0 }), /definitionRevision must be a safe integer > 0/);
  assert.throws(() => renderChatHtml([], { sessionId: 'not safe' }), /sessionId must be a SafeId/);
});

test('resolveChatSnapshot stamps the seed with the session and revision it was resolved for', async () => {
  const log = createMemorySessionLog();
  await log.append(LOG);
  const seed = await resolveChatSnapshot({ target: log, sessionId: 's1', definitionRevision: 2 });
  assert.equal(seed.sessionId, 's1');
  assert.equal(seed.definitionRevision, 2);
  assert.match(renderChatHtml(seed, PREPARED), /mine/);
  // A page prepared for the next revision refuses this seed.
  assert.throws(() => renderChatHtml(seed, { sessionId: 's1', definitionRevision: 3 }), refused('RENDER_REVISION_MISMATCH'));
  const unstamped = await resolveChatSnapshot({ target: log });
  assert.equal('sessionId' in unstamped, false);
  await assert.rejects(async () => resolveChatSnapshot({ target: log, definitionRevision: -1 }), /definitionRevision must be a safe integer > 0/);
});

/** A Durable Streams SSE answer holding `appends`, each followed by its control event. */
function sse(appends) {
  let offset = 0;
  const text = appends
    .map((chunks) => {
      offset += chunks.length;
      const next = `0000000000000000_${String(offset).padStart(16, '0')}`;
      return `event: data\ndata:${JSON.stringify(chunks)}\n\nevent: control\ndata:${JSON.stringify({ streamNextOffset: next, upToDate: true })}\n\n`;
    })
    .join('');
  return new Response(text, { headers: { 'content-type': 'text/event-stream' } });
}

test("the connection ends its readers on a foreign session's chunk, delivering nothing of it", async () => {
  const connection = createChatConnection({
    target: { url: 'http://streams.test/s1', sessionId: 's1' },
    definitionRevision: 2,
    fetch: async () => sse([LOG, [FOREIGN_RUN, { type: 'TEXT_MESSAGE_START', messageId: 'x-msg', role: 'assistant' }]]),
  });
  const seen = [];
  await assert.rejects(async () => {
    for await (const chunk of connection.subscribe()) seen.push(chunk);
  }, (error) => error.name === 'ChatConnectionError' && error.code === 'RENDER_FOREIGN_SESSION');
  assert.deepEqual(seen, LOG, 'its own session is delivered, nothing of the foreign append');
  assert.deepEqual(connection.snapshot().messages.map((m) => m.id), ['a1']);
  assert.equal(connection.offset, '0000000000000000_0000000000000005', 'the cursor stays before the foreign append');
  connection.dispose();
});

test("a connection refuses a newer revision's seed", () => {
  const seed = { ...projectChatSnapshot(LOG), offset: '0000000000000000_0000000000000005', sessionId: 's1', definitionRevision: 3 };
  const target = { url: 'http://streams.test/s1', sessionId: 's1' };
  assert.throws(() => createChatConnection({ target, seed, definitionRevision: 2 }), refused('RENDER_REVISION_MISMATCH'));
  const connection = createChatConnection({ target, seed: { ...seed, definitionRevision: 2 }, definitionRevision: 2 });
  assert.equal(connection.offset, seed.offset, 'a whole seed gives the offset');
  assert.deepEqual(connection.snapshot().messages, seed.messages);
  connection.dispose();
});

test("the seed's target { sessionId, baseUrl? } resolves to the session's routes; authorize is required with it and asked before every request", async () => {
  assert.throws(() => createChatConnection({ target: { sessionId: 's1', baseUrl: 'https://app.test' } }), /authorize is required with target \{ sessionId \}/);
  assert.throws(() => createChatConnection({ target: { sessionId: 's1' }, authorize: false }), /needs baseUrl outside a page/);
  assert.throws(() => createChatConnection({ target: { url: 'http://x/s' }, authorize: 'yes' }), /authorize must be/);
  const requests = [];
  const asked = [];
  let allow = true;
  const connection = createChatConnection({
    target: { sessionId: 's1', baseUrl: 'https://app.test/tenant', headers: { authorization: 'Bearer app' } },
    authorize: (request, sessionId) => (asked.push([request.method, new URL(request.url).pathname, sessionId]), allow),
    fetch: async (request) => {
      requests.push([request.method, request.url, request.headers.get('authorization')]);
      return request.method === 'POST' ? Response.json({ stop: { version: 1, turnId: 't1', state: 'stopping' } }, { status: 202 }) : new Response('no', { status: 401 });
    },
  });
  await assert.rejects(async () => {
    for await (const _ of connection.subscribe());
  }, (error) => error.code === 'STREAM_REFUSED' && error.status === 401);
  await connection.stopTurn('t1');
  assert.deepEqual(requests, [
    ['GET', 'https://app.test/tenant/api/chat/stream/s1?offset=-1&live=sse', 'Bearer app'],
    ['POST', 'https://app.test/tenant/api/chat', 'Bearer app'],
  ]);
  assert.deepEqual(asked, [['GET', '/tenant/api/chat/stream/s1', 's1'], ['POST', '/tenant/api/chat', 's1']]);
  // Denied: nothing is sent; a read ends as refused (403), a post rejects SESSION_FORBIDDEN.
  allow = false;
  requests.length = 0;
  await assert.rejects(async () => {
    for await (const _ of connection.subscribe());
  }, (error) => error.code === 'STREAM_REFUSED' && error.status === 403);
  await assert.rejects(connection.stopTurn('t1'), (error) => error.code === 'SESSION_FORBIDDEN' && error.status === 403);
  assert.deepEqual(requests, []);
  connection.dispose();
});

test('auth: the headers of every request, replacing the target headers (defaultStreamsAuth)', async () => {
  const seen = [];
  const connection = createChatConnection({
    target: { url: 'http://streams.test/s1', headers: { authorization: 'Bearer page' } },
    auth: async () => ({ authorization: 'Bearer streams' }),
    fetch: async (request) => (seen.push(request.headers.get('authorization')), new Response('no', { status: 403 })),
  });
  await assert.rejects(async () => {
    for await (const _ of connection.subscribe());
  }, /refused/);
  assert.deepEqual(seen, ['Bearer streams']);
  connection.dispose();
});

// The seed → live law through the real wasm, on the stored logs (text, tool cards, approvals,
// native batches: tests/fixtures/projection): at every cut, `new ChatProjection(seed)` of the
// prefix's seed fed the suffix shows what the whole log shows, and a tool card the seed drew is
// unchanged by the first live chunk unless that chunk is about its call.
const FIXTURES = new URL('../fixtures/projection/', import.meta.url);
const shown = (s) => ({ messages: s.messages, renderParts: s.renderParts, confirmations: s.confirmations, activeRunId: s.activeRunId });

for (const name of readdirSync(FIXTURES).filter((f) => f.endsWith('.json'))) {
  test(`seed → live at every cut: ${name}`, () => {
    const fixture = JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8'));
    const log = fixture.chunks ?? fixture.log ?? fixture;
    assert.ok(Array.isArray(log), `${name} holds a log`);
    const whole = shown(projectChatSnapshot(log));
    for (let cut = 0; cut <= log.length; cut++) {
      const seed = JSON.parse(JSON.stringify(projectChatSnapshot(log.slice(0, cut))));
      const live = new ChatProjection(seed);
      if (cut < log.length) {
        const first = log[cut];
        live.feed(first);
        const continuous = projectChatSnapshot(log.slice(0, cut + 1));
        for (const card of seed.renderParts.filter((p) => p.type === 'tool')) {
          const after = live.snapshot().renderParts.find((p) => p.type === 'tool' && p.toolCallId === card.toolCallId);
          assert.deepEqual(after, continuous.renderParts.find((p) => p.type === 'tool' && p.toolCallId === card.toolCallId), `${name} cut ${cut}`);
          const about = first.type === 'MESSAGES_SNAPSHOT' || first.toolCallId === card.toolCallId || first.value?.toolCallId === card.toolCallId;
          if (!about) assert.deepEqual(after, card, `${name}: card ${card.toolCallId} changed by the first live chunk at cut ${cut}`);
        }
        live.feedAll(log.slice(cut + 1));
      }
      assert.deepEqual(shown(live.snapshot()), whole, `${name}: seeded at cut ${cut}`);
    }
  });
}
