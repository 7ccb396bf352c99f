// A stand-in for Upstash's hosted REST endpoint, which cannot run here: it speaks the wire
// facts of that REST API (POST `/` with a command as a JSON array, POST `/pipeline` with a list
// of them, `Authorization: Bearer <token>`, `{ result }` / `{ error }` bodies, base64 strings
// when the client sends `Upstash-Encoding: base64`) and forwards each command to a REAL
// redis-server through node-redis. So `@upstash/redis`, the real package, is tested over HTTP
// against real Redis semantics; only the hosted service in between is ours.
import { createServer } from 'node:http';
import { createClient } from 'redis';

/** Largest request body accepted (the tests send at most a few hundred KiB). */
const BODY_BYTES_MAX = 16 * 1024 * 1024;

/** @returns {Promise<{ url: string, token: string, close(): Promise<void> }>} */
export async function startUpstashRestProxy(redisUrl, { token = 'test-token' } = {}) {
  const redis = createClient({ url: redisUrl });
  await redis.connect();
  const server = createServer((req, res) => {
    handle(redis, token, req)
      .then(({ status, body }) => send(res, status, body))
      .catch((error) => send(res, 500, { error: `proxy: ${error.message}` }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    token,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await redis.close();
    },
  };
}

async function handle(redis, token, req) {
  if (req.method !== 'POST') return { status: 405, body: { error: 'only POST' } };
  if (req.headers.authorization !== `Bearer ${token}`) return { status: 401, body: { error: 'Unauthorized' } };
  const base64 = String(req.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64';
  const body = JSON.parse(await readBody(req));
  const path = new URL(req.url, 'http://proxy').pathname;
  if (path === '/') {
    const { result, error } = await run(redis, body, base64);
    return error === undefined ? { status: 200, body: { result } } : { status: 400, body: { error } };
  }
  if (path === '/pipeline') {
    const results = [];
    for (const command of body) results.push(await run(redis, command, base64));
    return { status: 200, body: results };
  }
  return { status: 404, body: { error: `no route ${path}` } };
}

/** One command; a Redis error becomes `{ error }` as Upstash reports it. */
async function run(redis, command, base64) {
  if (!Array.isArray(command) || command.length === 0) return { error: 'ERR a command must be a non-empty array' };
  try {
    const reply = await redis.sendCommand(command.map(String));
    return { result: base64 ? encode(reply) : reply };
  } catch (error) {
    return { error: error.message };
  }
}

/** Upstash's base64 response encoding: every string (but "OK") as base64 of its UTF-8 bytes. */
function encode(reply) {
  if (typeof reply === 'string') return reply === 'OK' ? reply : Buffer.from(reply, 'utf8').toString('base64');
  if (Array.isArray(reply)) return reply.map(encode);
  return reply;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let bytes = 0;
    req.on('data', (chunk) => {
      bytes += chunk.length;
      if (bytes > BODY_BYTES_MAX) req.destroy(new Error('body too large'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
