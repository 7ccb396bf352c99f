// A stand-in stream server for the chat-stream proxy tests: a real loopback HTTP server whose
// answers the test scripts, and which records what reached it (method, URL, headers, body) and
// whether the client side went away before an answer ended.
import { createServer } from 'node:http';
import { gzipSync } from 'node:zlib';

/**
 * Routes by path:
 * - `/slow`: `event: data` (first part), then waits until `release()`, then the rest; the log
 *   says whether the connection closed before the end (`closedEarly`).
 * - `/gzip`: a gzip body with `content-encoding: gzip`, `content-length`, `set-cookie`.
 * - `/status/<n>`: status n with a body that must never reach a client (`SECRET`), plus
 *   `producer-epoch` when `?epoch` is given.
 * - `/echo`: the request's method, URL, headers and body as JSON.
 */
export const SECRET = 'upstream-secret-stack-trace';

export async function startUpstream() {
  const requests = [];
  let release = () => {};
  const released = () => new Promise((resolve) => (release = resolve));
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const entry = {
      method: req.method,
      url: req.url,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
      closedEarly: false,
      finished: false,
    };
    requests.push(entry);
    res.on('close', () => {
      if (!entry.finished) entry.closedEarly = true;
    });
    const url = new URL(req.url, 'http://upstream');
    if (url.pathname === '/slow') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'stream-next-offset': 'o1', 'cache-control': 'no-cache' });
      res.write('event: data\ndata:["first"]\n\n');
      await released();
      if (res.destroyed) return;
      res.end('event: data\ndata:["second"]\n\n', () => (entry.finished = true));
      return;
    }
    if (url.pathname === '/gzip') {
      const body = gzipSync('["compressed but not for the client"]');
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': String(body.length),
        'set-cookie': 'upstream=1',
        'stream-next-offset': 'o2',
      });
      res.end(body, () => (entry.finished = true));
      return;
    }
    const status = /^\/status\/(\d+)$/.exec(url.pathname);
    if (status) {
      const headers = { 'content-type': 'text/plain', 'x-upstream-debug': SECRET, 'stream-next-offset': 'o3' };
      if (url.searchParams.has('epoch')) headers['producer-epoch'] = '7';
      res.writeHead(Number(status[1]), headers);
      res.end(`${SECRET}\n`, () => (entry.finished = true));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: entry.body }), () => (entry.finished = true));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    requests,
    release: () => release(),
    stop: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Resolves once `check()` holds (polling every 10 ms), or rejects after `ms`. */
export async function eventually(check, ms = 5_000, what = 'the condition') {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
