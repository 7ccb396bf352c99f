// Runs the public Durable Streams conformance suite (@durable-streams/server-conformance-tests,
// all default tests) against the Worker on real workerd: `wrangler dev` on a free port with
// STREAMS_PUBLIC=1 and a 3 s long-poll (the suite waits for a 204 inside its 5 s test timeout),
// then vitest with only the suite file. The server is stopped afterwards, also on failure, and
// the exit code is vitest's. Expects pkg/ to be built (scripts/build.sh).
import { spawn } from 'node:child_process';
import { join } from 'node:path';

import { ROOT, removeDir, startWorker, tempDir } from './harness.mjs';

/**
 * The whole suite's bound (it takes about a minute here; each of its tests has vitest's own
 * timeout). A run that outlives it is killed and fails by name, so a hang cannot hold CI.
 */
const SUITE_MS_MAX = 600_000;

const state = tempDir('turnkeep-conformance-');
let worker;
let code = 1;
try {
  worker = await startWorker({ persistDir: state, vars: { STREAMS_PUBLIC: '1', STREAMS_LONG_POLL_MS: '3000' } });
  console.log(`[streams-conformance] suite against ${worker.baseUrl}`);
  const vitest = spawn(join(ROOT, 'node_modules/.bin/vitest'), ['run', '--config', 'tests/streams-conformance/vitest.config.mjs'], {
    cwd: ROOT,
    env: { ...process.env, STREAMS_BASE_URL: worker.baseUrl },
    stdio: 'inherit',
  });
  const bound = setTimeout(() => {
    console.error(`[streams-conformance] the suite did not end within ${SUITE_MS_MAX} ms: killed`);
    vitest.kill('SIGKILL');
  }, SUITE_MS_MAX);
  code = await new Promise((resolve) => vitest.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
  clearTimeout(bound);
} catch (error) {
  console.error(`[streams-conformance] ${error.message}`);
} finally {
  await worker?.stop();
  removeDir(state);
}
process.exit(code);
