// A tiny static file server over the package directory, for the browser tests.
// Serves only files under `root`, with the MIME types a browser needs for ESM and wasm.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, normalize, join, sep } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
};

/** Starts the server on 127.0.0.1 with an ephemeral port; `pages` maps paths to HTML. */
export async function serveStatic(root, pages = {}) {
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (pages[path] !== undefined) {
      res.writeHead(200, { 'content-type': TYPES['.html'] }).end(pages[path]);
      return;
    }
    const file = normalize(join(root, path));
    if (!file.startsWith(root.endsWith(sep) ? root : root + sep)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }) };
}
