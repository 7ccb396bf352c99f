// Runs the public Durable Streams conformance suite (@durable-streams/server-conformance-tests,
// all default tests) against the Worker on real workerd: `wrangler dev` on a free port with
// STREAMS_PUBLIC=1 and a 3 s long-poll (the suite waits for a 204 inside its 5 s test timeout),
// then vitest with only the suite file. The server is stopped afterwards, also on failure, and
// the exit code is vitest's. Expects pkg/ to be built (scripts/build.sh).
import { spawn } from 'node:child_process';
import { join } from 'node:path';

import { ROOT, removeDir, startWorker, tempDir } from './harness.mjs';

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
  code = await new Promise((resolve) => vitest.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
} catch (error) {
  console.error(`[streams-conformance] ${error.message}`);
} finally {
  await worker?.stop();
  removeDir(state);
}
process.exit(code);
