// Starts the Worker (wrangler.toml at the repository root) on real workerd with `wrangler dev` on
// a free loopback port, for the session-stream tests and bench/streams.mjs. Expects pkg/ to be
// built. `stop()` ends the whole process group it started (wrangler and its workerd child).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WRANGLER = join(ROOT, 'node_modules/.bin/wrangler');
const READY_TIMEOUT_MS = 60_000;

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** A fresh directory for `--persist-to` (remove it with `removeDir`). */
export function tempDir(prefix = 'turnkeep-streams-') {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Starts `wrangler dev`. `vars` become `--var NAME:value`; `persistDir` keeps Durable Object
 * storage across restarts. Resolves once the Worker answers HTTP.
 */
export async function startWorker({ persistDir, vars = {}, port } = {}) {
  port ??= await freePort();
  const args = ['dev', '--ip', '127.0.0.1', '--port', String(port), '--persist-to', persistDir,
    '--show-interactive-dev-session=false'];
  for (const [name, value] of Object.entries(vars)) args.push('--var', `${name}:${value}`);
  const child = spawn(WRANGLER, args, {
    cwd: ROOT,
    detached: true, // own process group, so stop() reaches workerd too
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: 'false',
      WRANGLER_SEND_ERROR_REPORTS: 'false',
      CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    },
  });
  let log = '';
  child.stdout.on('data', (d) => { log += d; });
  child.stderr.on('data', (d) => { log += d; });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        child.kill('SIGTERM');
      }
    }
    await exited;
  };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early:\n${log}`);
    try {
      await fetch(`${baseUrl}/v1/stream/`, { method: 'HEAD' });
      return { baseUrl, port, stop, log: () => log };
    } catch {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`wrangler dev did not start:\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
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
