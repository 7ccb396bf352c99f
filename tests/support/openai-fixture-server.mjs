// A small OpenAI-compatible endpoint for tests: node:http on 127.0.0.1 (port 0) that answers
// `POST /v1/chat/completions` by replaying recorded streams from tests/fixtures/openai/.
//
// The scenario is picked by the last user message (or, failing that, the `model` field):
//   fixture:text          text.sse          a text answer with a final usage chunk
//   fixture:tool          tool-call.sse     a tool call whose deltas repeat id and name
//   fixture:cut           cut.sse           two chunks, then the body ends (no finish, no [DONE])
//   fixture:reset         cut.sse           two chunks, then the socket is destroyed
//   fixture:stream-error  stream-error.sse  a provider error inside a 200 stream
//   fixture:error         error-status.json a 429 with a JSON error body
//   fixture:endless       (generated)       a chunk every 10 ms until the client goes away
// Anything else is a 404 `{ error }`. Replayed bytes are written in small uneven pieces, so a
// parser that assumes whole events per read fails.
//
// Every request is recorded (`requests`: method, path, authorization, body) and every client
// disconnect before the response ended counts in `disconnects` (with a `waitForDisconnect()`).
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';

const FIXTURES = new URL('../fixtures/openai/', import.meta.url);
/// Piece sizes the replay cycles through (bytes), so events and UTF-8 sequences are split.
const PIECE_BYTES = [7, 1, 13, 2, 31, 5];
const ENDLESS_INTERVAL_MS = 10;

export async function startOpenAIFixtureServer() {
  const requests = [];
  let disconnects = 0;
  const disconnectWaiters = [];
  const server = createServer((req, res) => {
    handle(req, res, requests).catch(() => res.destroy());
    res.once('close', () => {
      if (res.writableFinished) return;
      disconnects += 1;
      disconnectWaiters.splice(0).forEach((resolve) => resolve());
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get disconnects() {
      return disconnects;
    },
    /// Resolves at the next client disconnect (at once if one already happened).
    waitForDisconnect() {
      if (disconnects > 0) return Promise.resolve();
      return new Promise((resolve) => disconnectWaiters.push(resolve));
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

async function handle(req, res, requests) {
  const text = await readBody(req);
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    // recorded as null; answered below
  }
  requests.push({ method: req.method, path: req.url, authorization: req.headers.authorization ?? null, contentType: req.headers['content-type'] ?? null, body });
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return json(res, 404, { error: { message: 'no such route' } });
  if (body === null) return json(res, 400, { error: { message: 'body is not JSON' } });
  switch (scenario(body)) {
    case 'text':
      return replay(res, 'text.sse');
    case 'tool':
      return replay(res, 'tool-call.sse');
    case 'cut':
      return replay(res, 'cut.sse');
    case 'reset':
      return replay(res, 'cut.sse', { reset: true });
    case 'stream-error':
      return replay(res, 'stream-error.sse');
    case 'error': {
      const recorded = JSON.parse(readFileSync(new URL('error-status.json', FIXTURES), 'utf8'));
      res.writeHead(recorded.status, recorded.headers);
      return res.end(JSON.stringify(recorded.body));
    }
    case 'endless':
      return endless(res);
    default:
      return json(res, 404, { error: { message: 'no fixture for this request' } });
  }
}

/// `fixture:<name>` from the last user message, else from the model name.
function scenario(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const lastUser = [...messages].reverse().find((m) => m && m.role === 'user');
  for (const text of [lastUser?.content, body.model]) {
    const match = typeof text === 'string' ? /^fixture:([a-z-]+)/.exec(text.trim()) : null;
    if (match) return match[1];
  }
  return null;
}

async function replay(res, file, { reset = false } = {}) {
  const bytes = readFileSync(new URL(file, FIXTURES));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const size = PIECE_BYTES[i % PIECE_BYTES.length];
    if (!res.write(bytes.subarray(at, at + size))) await once(res, 'drain');
    at += size;
    await new Promise((resolve) => setImmediate(resolve)); // separate network writes
    if (res.destroyed) return;
  }
  if (reset) res.socket.destroy();
  else res.end();
}

async function endless(res) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (let i = 0; !res.destroyed; i++) {
    const chunk = { id: 'chatcmpl-endless', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: ` w${i}` }, finish_reason: null }] };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    await new Promise((resolve) => setTimeout(resolve, ENDLESS_INTERVAL_MS));
  }
}

function json(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

async function readBody(req) {
  const parts = [];
  for await (const part of req) parts.push(part);
  return Buffer.concat(parts).toString('utf8');
}
