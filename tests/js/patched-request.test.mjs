// A host may replace `globalThis.Request` with a subclass of its own (OpenNext's Cloudflare
// runtime does, when the Next app serves its first request); the runtime's own requests are then
// not `instanceof` the global. Every turnkeep handler still takes them (web::http::as_request):
// before, each answered 500 SERVER_INTERNAL without calling onError. Run in its own file: the
// global is patched for the whole process while it runs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';

import * as pkg from '../../js/node.mjs';
import { createMcpSandboxHandler } from '../../js/sandbox/node.mjs';
import { demoSetup, readTurn, submitEvent } from '../support/chat-harness.mjs';

const NativeRequest = globalThis.Request;
class FrameworkRequest extends NativeRequest {}
globalThis.Request = FrameworkRequest;
after(() => {
  globalThis.Request = NativeRequest;
});

test('a native request under a patched global Request: the chat handler runs the turn', async () => {
  const { handler } = demoSetup(pkg);
  // What the runtime hands the Worker: made by its own (native) class.
  const request = new NativeRequest('http://local/api/chat', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(submitEvent({ input: 'hello' })),
  });
  assert.ok(!(request instanceof globalThis.Request), 'the request is not an instance of the patched global');
  const response = await handler(request);
  assert.equal(response.status, 200);
  const turn = await readTurn(pkg, response);
  assert.equal(turn.last.payload.status, 'complete');
});

test('something that is no request at all is still refused', async () => {
  const { handler } = demoSetup(pkg);
  const response = await handler({ url: 'http://x/', method: 'POST' }); // no headers
  assert.equal(response.status, 500);
});

test('the sandbox handler takes the native request too', async () => {
  const handler = createMcpSandboxHandler({ resolveResource: (uri) => (uri === 'ui://demo/hello' ? '<main>Hello</main>' : undefined) });
  const response = await handler(new NativeRequest('https://app.example/mcp/sandbox?uri=ui%3A%2F%2Fdemo%2Fhello'));
  assert.equal(response.status, 200);
  assert.match(await response.text(), /<main>Hello<\/main>/);
});
