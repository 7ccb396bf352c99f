// Starts the Worker (wrangler.toml at the repository root) on real workerd with `wrangler dev` on
// a free loopback port, for the session-stream tests and bench/streams.mjs. Expects pkg/ to be
// built. `stop()` ends the whole process group it started (wrangler and its workerd child).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ROOT, freePort, startWranglerDev } from '../support/wrangler-dev.mjs';

export { ROOT, freePort };

/** A fresh directory for `--persist-to` (remove it with `removeDir`). */
export function tempDir(prefix = 'turnkeep-streams-') {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Starts `wrangler dev` (tests/support/wrangler-dev.mjs). `vars` become `--var NAME:value`;
 * `persistDir` keeps Durable Object storage across restarts. Resolves once the Worker answers.
 */
export async function startWorker({ persistDir, vars = {}, port } = {}) {
  const dev = await startWranglerDev({ persistDir, vars, port });
  return { baseUrl: dev.url, port: dev.port, stop: dev.stop, log: dev.output };
}

/**
 * The same Worker on workerd through the Miniflare API, without wrangler dev's reloading proxy
 * in front (about 3 ms per request on this machine): what bench/streams.mjs measures. The
 * bindings mirror wrangler.toml (both SQLite-backed Durable Object classes).
 */
export async function startMiniflare({ persistDir, vars = {} } = {}) {
  const { Miniflare } = await import('miniflare');
  const mf = new Miniflare({
    modules: true,
    modulesRoot: '/',
    scriptPath: join(ROOT, 'js/cloudflare/worker.mjs'),
    modulesRules: [
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
      { type: 'Text', include: ['**/*.html'] },
      { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
    ],
    compatibilityDate: '2026-04-20',
    compatibilityFlags: ['enable_request_signal'],
    durableObjects: {
      SESSION_STREAM: { className: 'SessionStream', useSQLite: true },
      CHAT_SESSION: { className: 'ChatSession', useSQLite: true },
    },
    durableObjectsPersist: persistDir,
    bindings: vars,
    host: '127.0.0.1',
    port: await freePort(),
  });
  const url = await mf.ready;
  return { baseUrl: url.href.replace(/\/$/, ''), stop: () => mf.dispose() };
}
