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

/** Why `response` is not the versioned diagnostic `entry` expects (empty when it is). */
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
  if (!d || d.version !== 1 || typeof d.message !== 'string' || !d.message || typeof d.retryable !== 'boolean') {
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
