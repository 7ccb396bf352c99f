// The hostile-input corpus (tests/fixtures/hostile/corpus.json) against the npm handlers in Node:
// createChatHandler, createAskServiceHandler and createMcpSandboxHandler behind toNodeHandler on
// a real node:http server (the entries marked `worker` are the demo Worker's own routes and run
// in tests/workerd/hostile.test.mjs). Every request gets its registry row as a versioned
// diagnostic with nothing internal in it; the server stays up; nothing reaches storage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';

import {
  createChatHandler,
  createMemoryChatMemory,
  createMemorySessionStorage,
  defineChat,
  createDemoModel,
} from '../../js/node.mjs';
import { createAskServiceHandler } from '../../js/ask/node.mjs';
import { createMcpSandboxHandler } from '../../js/sandbox/node.mjs';
import { toNodeHandler } from '../../js/node-bridge.mjs';
import { corpus, runCorpus } from '../support/hostile.mjs';

const TENANT = 'hostile';

test(`every hostile request to the npm handlers in Node gets its versioned diagnostic (${corpus.entries.filter((e) => !e.worker).length} requests)`, async () => {
  const writes = [];
  const storage = createMemorySessionStorage();
  const recording = {
    load: (id, signal) => storage.load(id, signal),
    save: (snapshot, expected, signal) => (writes.push(snapshot.sessionId), storage.save(snapshot, expected, signal)),
  };
  const memory = createMemoryChatMemory();
  const definition = defineChat({ id: 'demo', revision: 1, model: createDemoModel({ chunkDelayMs: 0 }), memory });
  const chat = createChatHandler({
    authenticate: (request) => request.headers.get('authorization') === `Bearer ${TENANT}`
      ? { ok: true, context: {} }
      : { ok: false, response: new Response('no', { status: 401 }) },
    resolveDefinition: () => definition,
    sessionStorage: () => recording,
  });
  const ask = createAskServiceHandler({
    authenticate: () => ({ ok: true, context: { subjectId: 'u' } }),
    resolveSite: () => ({
      protocol: 'agentskit.chat.backend-site', version: 1, siteId: 'docs',
      assistant: { id: 'docs-guide', name: 'Guide', suggestions: [] },
      corpus: { id: 'docs-public', mode: 'local' }, components: [], actions: [],
      limits: { requestTimeoutMs: 2_000, retrievalTimeoutMs: 1_000, generationTimeoutMs: 1_000, maxSources: 3 },
      persistence: { mode: 'disabled' },
    }),
    resolveSubjectId: (context) => context.subjectId,
    retrievers: { local: { retrieve: () => [] } },
    generator: { async *generate() { yield { type: 'text', delta: 'x' }; } },
  });
  const sandbox = createMcpSandboxHandler({
    resolveResource: (uri) => ({ 'ui://demo/hello': '<main>Hello</main>' })[uri],
    themes: { light: { '--ns-color-surface': '#ffffff' } },
  });
  const route = (request) => {
    const { pathname } = new URL(request.url);
    if (pathname === '/api/chat') return chat(request);
    if (pathname === '/api/ask') return ask(request);
    if (pathname === '/mcp/sandbox') return sandbox(request);
    return new Response('not here', { status: 404 });
  };
  const server = createServer(toNodeHandler(route));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const baseUrl = `http://127.0.0.1:${server.address().port}`;
  try {
    const entries = corpus.entries.filter((e) => !e.worker);
    const failures = await runCorpus(baseUrl, entries, {
      tenant: TENANT,
      sid: (i) => `hostile-${i}`,
      afterEach: async () => {
        const probe = await fetch(`${baseUrl}/mcp/sandbox?uri=ui://demo/hello`);
        await probe.arrayBuffer();
        return probe.status === 200 ? [] : [`the server answered a probe with ${probe.status}`];
      },
    });
    assert.deepEqual(failures, []);
    assert.deepEqual(writes, [], 'no session was written');
  } finally {
    server.close();
  }
});

test('the check loop fails an unversioned, leaking or wrong answer (it can fail)', async () => {
  const { problems } = await import('../support/hostile.mjs');
  const entry = { expect: [400, 'REQUEST_INVALID_JSON'] };
  const json = { 'content-type': 'application/json' };
  const good = { status: 400, headers: json, text: JSON.stringify({ error: { version: 1, code: 'REQUEST_INVALID_JSON', message: 'Request body is not valid JSON.', retryable: false } }) };
  assert.deepEqual(problems(entry, good), []);
  for (const bad of [
    { ...good, text: JSON.stringify({ error: { code: 'REQUEST_INVALID_JSON', message: 'x' } }) },
    { ...good, text: JSON.stringify({ error: { version: 1, code: 'REQUEST_INVALID_JSON', message: 'panicked at src/core/x.rs:3:1', retryable: false } }) },
    { ...good, status: 500 },
    { ...good, headers: { 'content-type': 'text/plain' } },
    { ...good, text: 'RuntimeError: unreachable' },
  ]) {
    assert.notDeepEqual(problems(entry, bad), [], bad.text);
  }
  assert.notDeepEqual(problems({ expect: [400, 'NOT_A_REGISTERED_CODE'] }, good), []);
});
