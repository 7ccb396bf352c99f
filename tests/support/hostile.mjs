// The hostile-input check loop: every entry of tests/fixtures/hostile/corpus.json is sent over a
// raw socket (so headers, lengths and slow drips are exactly what the entry says) and must get
// its registry row as a versioned diagnostic, with nothing internal in the body. The callers
// (tests/workerd/hostile.test.mjs, tests/js/hostile-node.test.mjs) check that the server stayed
// up and stored nothing.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { submitEvent } from './chat-harness.mjs';

const root = new URL('../../', import.meta.url);

export const corpus = JSON.parse(readFileSync(new URL('tests/fixtures/hostile/corpus.json', root), 'utf8'));

/** The registry rows as README.md lists them (a test keeps that table equal to the Rust one). */
export const registry = (() => {
  const rows = new Set();
  for (const line of readFileSync(new URL('README.md', root), 'utf8').split('\n')) {
    const m = /^\| (\w+) \| (\d{3}) \| `([^`]+)` \|/.exec(line);
    if (m) rows.add(`${m[2]} ${m[3]}`);
  }
  return rows;
})();

/** What no diagnostic may carry: runtime, wasm or Rust internals, stack frames, echoed input. */
const LEAKS = [/panicked/i, /RuntimeError/, /unreachable/i, /\bwasm\b/i, /\.rs:\d/, /\bat .*:\d+:\d+/, /TypeError|SyntaxError|ReferenceError/, /Unexpected token/, /serde/i, /JsValue/, /<script/i, /etc\/passwd/, /Symbol\(/];

/** Expands `{{repeat:c:N}}` in a string. */
function expand(text) {
  return text.replace(/\{\{repeat:(.):(\d+)\}\}/g, (_, c, n) => c.repeat(Number(n)));
}

function bodyBytes(spec, sid) {
  if (!spec) return Buffer.alloc(0);
  if ('text' in spec) return Buffer.from(spec.text, 'utf8');
  if ('base64' in spec) return Buffer.from(spec.base64, 'base64');
  if ('json' in spec) return Buffer.from(JSON.stringify(spec.json));
  if ('repeat' in spec) return Buffer.from(spec.repeat.unit.repeat(spec.repeat.times));
  if ('nest' in spec) {
    const { open, close, depth, inner } = spec.nest;
    return Buffer.from(open.repeat(depth) + inner + close.repeat(depth));
  }
  if ('submit' in spec) {
    const event = submitEvent({ sessionId: sid, turnId: `t-${sid}`, extra: { emittedAt: new Date().toISOString() } });
    for (const [key, value] of Object.entries(spec.submit)) {
      if (value === null) delete event[key];
      else event[key] = typeof value === 'string' ? expand(value) : JSON.parse(expand(JSON.stringify(value)));
    }
    return Buffer.from(JSON.stringify(event));
  }
  throw new Error(`unknown body spec ${JSON.stringify(spec)}`);
}

function headersOf(entry, tenant) {
  const headers = {};
  for (const [name, value] of Object.entries(entry.headers ?? {})) {
    const many = /^\{\{many:(\d+)\}\}$/.exec(value);
    if (many) for (let i = 0; i < Number(many[1]); i++) headers[`${name}${i}`] = 'x'.repeat(64);
    else headers[name] = expand(value);
  }
  if (entry.auth) headers.authorization = `Bearer ${tenant}`;
  return headers;
}

/** Sends one entry to `baseUrl`; resolves `{ status, headers, text }`. */
export function send(baseUrl, entry, { tenant, sid }) {
  const url = new URL(baseUrl);
  const path = expand(entry.path.replaceAll('{{sid}}', sid));
  const body = bodyBytes(entry.body, sid);
  const headers = headersOf(entry, tenant);
  const drip = entry.drip;
  if (!drip && !entry.rawLength && entry.body) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method: entry.method, path, headers, setHost: true }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (entry.rawLength) {
      // A declared length the body never reaches: the server must answer from the header.
      req.write(body);
      return;
    }
    if (!drip) {
      req.end(body);
      return;
    }
    let at = 0;
    const next = () => {
      if (req.destroyed) return;
      if (at >= body.length) return req.end();
      const piece = body.subarray(at, at + drip.chunkBytes);
      at += piece.length;
      req.write(piece, () => setTimeout(next, drip.delayMs));
    };
    next();
  });
}

/**
 * Why `response` is not the versioned diagnostic `entry` expects (empty when it is). The Ask
 * service's body is AgentsKit's Ask backend diagnostic exactly, which has no `version`
 * (README, "AgentsKit Chat compatibility"): there, `version` must be absent.
 */
export function problems(entry, response) {
  const [status, code] = entry.expect;
  const out = [];
  if (response.status !== status) out.push(`status ${response.status}, expected ${status}`);
  if (!registry.has(`${status} ${code}`)) out.push(`${status} ${code} is not a registry row`);
  if (!/^application\/json/.test(response.headers['content-type'] ?? '')) out.push(`content-type ${response.headers['content-type']}`);
  let body;
  try {
    body = JSON.parse(response.text);
  } catch {
    out.push(`body is not JSON: ${response.text.slice(0, 200)}`);
    return out;
  }
  const d = body?.error;
  const version = entry.surface === 'ask' ? undefined : 1;
  if (!d || d.version !== version || typeof d.message !== 'string' || !d.message || typeof d.retryable !== 'boolean') {
    out.push(`not a versioned diagnostic: ${response.text.slice(0, 200)}`);
  } else if (d.code !== code) {
    out.push(`code ${d.code}, expected ${code}`);
  } else if (!registry.has(`${response.status} ${d.code}`)) {
    out.push(`${response.status} ${d.code} is not a registry row`);
  }
  for (const leak of LEAKS) if (leak.test(response.text)) out.push(`leaks ${leak}: ${response.text.slice(0, 200)}`);
  return out;
}

/** Runs `entries` one after another against `baseUrl`; returns the failures, one line each. */
export async function runCorpus(baseUrl, entries, { tenant, sid, afterEach }) {
  const failures = [];
  for (const [i, entry] of entries.entries()) {
    const id = sid(i);
    let response;
    try {
      response = await send(baseUrl, entry, { tenant, sid: id });
    } catch (error) {
      failures.push(`${entry.name}: no answer (${error.code ?? error.message})`);
      continue;
    }
    for (const p of problems(entry, response)) failures.push(`${entry.name}: ${p}`);
    if (afterEach) for (const p of await afterEach(entry, id)) failures.push(`${entry.name}: ${p}`);
  }
  return failures;
}

/** The size of the refused bodies `refusedBodyThenNext` sends: over every route's body limit. */
export const REFUSED_BODY_BYTES = 2 * 1024 * 1024;

/**
 * The POST routes of the demo Worker, each refused for a 2 MB body (too large, or refused from its
 * headers before the body is read): [label, path, headers, expected status].
 */
export const REFUSED_BODY_ROUTES = [
  ['chat', '/api/chat', { authorization: 'Bearer demo', 'content-type': 'application/json' }, 413],
  ['chat without credentials', '/api/chat', { 'content-type': 'application/json' }, 401],
  ['ask', '/api/ask', { authorization: 'Bearer demo', 'content-type': 'application/json' }, 413],
  ['ask without credentials', '/api/ask', { 'content-type': 'application/json' }, 401],
  ['stream append without the token', '/v1/stream/refused-body', { 'content-type': 'application/json' }, 401],
  ['chat-stream proxy (read-only)', '/api/chat/stream/refused-body', { authorization: 'Bearer demo' }, 405],
];

/**
 * For each route: a 2 MB POST that is refused, then a valid request (`GET /api/sessions/...`)
 * with Node's fetch, which sends it on the same keep-alive connection. Returns one line per
 * failure: a refusal with the wrong status, a next request that failed, was answered with
 * anything but 200, or took longer than `nextMsMax`.
 */
export async function refusedBodyThenNext(baseUrl, { nextMsMax = 5_000 } = {}) {
  const body = new Uint8Array(REFUSED_BODY_BYTES).fill(0x61);
  const failures = [];
  for (const [label, path, headers, status] of REFUSED_BODY_ROUTES) {
    try {
      const refused = await fetch(`${baseUrl}${path}`, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) });
      await refused.arrayBuffer();
      if (refused.status !== status) failures.push(`${label}: refused with ${refused.status}, expected ${status}`);
    } catch (error) {
      failures.push(`${label}: the refusal failed (${error.cause?.code ?? error.message})`);
      continue;
    }
    const started = Date.now();
    try {
      const next = await fetch(`${baseUrl}/api/sessions/refused-body`, {
        headers: { authorization: 'Bearer demo' },
        signal: AbortSignal.timeout(nextMsMax),
      });
      await next.arrayBuffer();
      if (next.status !== 200) failures.push(`${label}: the next request was answered ${next.status}`);
    } catch (error) {
      failures.push(`${label}: the next request failed after ${Date.now() - started} ms (${error.cause?.code ?? error.message})`);
    }
  }
  return failures;
}
