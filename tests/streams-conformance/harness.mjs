// Starts the Worker (wrangler.toml at the repository root) on real workerd with `wrangler dev` on
// a free loopback port, for the session-stream tests and bench/streams.mjs. Expects pkg/ to be
// built. `stop()` ends the whole process group it started (wrangler and its workerd child).
import { startWranglerDev } from '../support/wrangler-dev.mjs';

export { ROOT, freePort } from '../support/wrangler-dev.mjs';
export { removeDir, tempDir } from '../support/temp-dir.mjs';

/**
 * Starts `wrangler dev` (tests/support/wrangler-dev.mjs). `vars` become `--var NAME:value`;
 * `persistDir` keeps Durable Object storage across restarts. Resolves once the Worker answers.
 */
export async function startWorker({ persistDir, vars = {}, port } = {}) {
  const dev = await startWranglerDev({ persistDir, vars, port });
  return { baseUrl: dev.url, port: dev.port, stop: dev.stop, log: dev.output };
}
