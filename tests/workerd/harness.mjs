// Starts the demo Worker (or a test Worker) in real workerd through the Miniflare 4 API, with
// the bindings, migrations, compatibility date and flags read from wrangler.toml by wrangler
// itself (`unstable_getMiniflareWorkerOptions`), so the tests run what `wrangler dev` runs.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';
import { ROOT as root } from '../support/wrangler-dev.mjs';

export { root };

/** Miniflare options equal to wrangler.toml's, with `scriptPath` (default: its `main`). */
export function workerOptions({ scriptPath, persistDir, bindings = {} } = {}) {
  const { workerOptions: fromToml, main } = unstable_getMiniflareWorkerOptions(join(root, 'wrangler.toml'));
  return {
    ...fromToml,
    modules: true,
    modulesRoot: root,
    scriptPath: scriptPath ?? main,
    modulesRules: [{ type: 'ESModule', include: ['**/*.js', '**/*.mjs'] }, ...fromToml.modulesRules],
    bindings: { ...fromToml.bindings, ...bindings },
    host: '127.0.0.1',
    port: 0,
    ...(persistDir ? { durableObjectsPersist: persistDir } : {}),
  };
}

/** Starts workerd; `url` is the origin to fetch. Dispose with `stop()`. */
export async function startWorker(options = {}) {
  const mf = new Miniflare(workerOptions(options));
  const url = (await mf.ready).origin;
  return { mf, url, stop: () => mf.dispose() };
}

export { removeDir, tempDir } from '../support/temp-dir.mjs';

/** Files under `dir`, recursively (empty when it does not exist). */
export function filesUnder(dir) {
  let out = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    out = entry.isDirectory() ? out.concat(filesUnder(path)) : out.concat(path);
  }
  return out;
}

export { ndjson, postTurn, submitBody } from '../support/http-chat.mjs';

/** GET /api/sessions/:sessionId as `tenant`, parsed. */
export async function getSession(url, tenant, sessionId) {
  const response = await fetch(`${url}/api/sessions/${sessionId}`, { headers: { authorization: `Bearer ${tenant}` } });
  if (response.status !== 200) throw new Error(`GET session: ${response.status} ${await response.text()}`);
  return response.json();
}
