// Starts `wrangler dev` (wrangler 4.86.0 from node_modules) the way scripts/start.sh does:
// offline, telemetry off, on 127.0.0.1, Durable Object state under `persistDir`. Used by the
// tests that need the real local runtime (restart, Durable Streams) and by the benchmarks.
//
// A port picked free can be taken again before wrangler binds it: wrangler picks its own
// inspector port the same way, and test files run in parallel. When wrangler exits because its
// address is in use, the launch is retried on a new port (unless the caller fixed the port).
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { spawnServer } from './spawn-server.mjs';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The demo Worker's test build (pkg-worker-test/, with the `/__test/*` routes and hold points),
 * served instead of wrangler.toml's `main` by the tests that need its hooks: pass it as
 * `script` here or as `entry` to serveWorkerd. Everything else runs the Worker as it deploys.
 */
export const TEST_HOOKS_WORKER = 'tests/support/test-hooks-worker.mjs';
export const OFFLINE_ENV = {
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_SEND_ERROR_REPORTS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
};
const READY_TIMEOUT_MS = 60_000;
const LAUNCH_ATTEMPTS_MAX = 4;
/**
 * How long the first request may take once wrangler printed "Ready on". Under load (three CPU
 * burners on this 2-core machine) a launch was seen, about once in ten, whose first request never
 * got an answer, not even after 90 s, and every test of that file then waited for ever. Its
 * workerd process kept using CPU long after the test was gone, so the runtime or the Worker was
 * busy, not idle; what it was doing is not pinned down (the closing note of stop 20). A launch
 * whose first request is not answered in this time is stopped and launched again (at most
 * LAUNCH_ATTEMPTS_MAX); one that never answers still fails, by name.
 */
const FIRST_ANSWER_MS_MAX = 30_000;

/** A TCP port on 127.0.0.1 that was free a moment ago. */
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
 * `wrangler dev [script] --ip 127.0.0.1 --port <port> --persist-to <persistDir> [--var K:V ...]`
 * in `cwd` (default the repository root, i.e. the demo Worker; an example app passes its own
 * directory and uses its own wrangler); `script` (e.g. TEST_HOOKS_WORKER) replaces the
 * configuration's `main`. Resolves when wrangler prints "Ready on" with
 * `{ url, port, output(), stop(), crash() }`; `stop()` ends its whole process group (wrangler
 * and its workerd child) and waits for it; `crash()` does the same with SIGKILL (no shutdown
 * code runs: what the crash tests need).
 */
export async function startWranglerDev({ persistDir, port, vars = {}, cwd = ROOT, script }) {
  for (let attempt = 1; ; attempt += 1) {
    const chosen = port ?? (await freePort());
    let dev;
    try {
      dev = await launch({ persistDir, port: chosen, vars, cwd, script });
    } catch (error) {
      const retry = port === undefined && error.addressInUse && attempt < LAUNCH_ATTEMPTS_MAX;
      if (!retry) throw error;
      continue;
    }
    if (await answers(dev.url)) return dev;
    await dev.stop();
    if (attempt >= LAUNCH_ATTEMPTS_MAX) {
      throw new Error(`wrangler dev said it was ready but did not answer a request within ${FIRST_ANSWER_MS_MAX} ms, ${attempt} launches in a row:\n${dev.output()}`);
    }
  }
}

/** Whether `GET url/` gets any HTTP answer (any status) within FIRST_ANSWER_MS_MAX. */
async function answers(url) {
  try {
    const response = await fetch(`${url}/`, { signal: AbortSignal.timeout(FIRST_ANSWER_MS_MAX) });
    await response.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

async function launch({ persistDir, port, vars, cwd, script }) {
  const args = ['dev', ...(script ? [script] : []), '--ip', '127.0.0.1', '--port', String(port), '--persist-to', persistDir,
    '--show-interactive-dev-session=false'];
  for (const [key, value] of Object.entries(vars)) args.push('--var', `${key}:${value}`);
  const { child, output, stop, kill } = await spawnServer({
    command: `${cwd}/node_modules/.bin/wrangler`,
    args,
    cwd,
    env: OFFLINE_ENV,
    ready: /Ready on http/,
    timeoutMs: READY_TIMEOUT_MS,
  });
  const crash = async () => {
    kill();
    await stop();
  };
  return { url: `http://127.0.0.1:${port}`, port, pid: child.pid, output, stop, crash };
}
