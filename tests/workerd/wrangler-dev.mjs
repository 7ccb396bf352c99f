// Starts `wrangler dev` (wrangler 4.86.0 from node_modules) the way scripts/start.sh does:
// offline, telemetry off, state under `persistDir`. For the restart test and bench/worker.mjs.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { root } from './harness.mjs';

export const OFFLINE_ENV = {
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_SEND_ERROR_REPORTS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
};
const READY_TIMEOUT_MS = 60_000;

/** A TCP port that was free a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * `wrangler dev --ip 127.0.0.1 --port <port> --persist-to <persistDir> [--var K:V ...]`.
 * Resolves when wrangler prints "Ready on"; `stop()` ends its process group and waits.
 */
export async function startWranglerDev({ persistDir, port, vars = {} }) {
  port ??= await freePort();
  const args = ['dev', '--ip', '127.0.0.1', '--port', String(port), '--persist-to', persistDir];
  for (const [key, value] of Object.entries(vars)) args.push('--var', `${key}:${value}`);
  const child = spawn(`${root}node_modules/.bin/wrangler`, args, {
    cwd: root,
    env: { ...process.env, ...OFFLINE_ENV, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wrangler dev was not ready in time:\n${output}`)), READY_TIMEOUT_MS);
    const onData = (chunk) => {
      output += chunk;
      if (/Ready on http/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`wrangler dev exited (${code}) before it was ready:\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    async stop() {
      if (child.exitCode === null) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      await exited;
    },
  };
}
