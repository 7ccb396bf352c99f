// The demo Worker's one JS dependency, bundled by scripts/build.sh into pkg-worker/workers-ai.mjs:
// `createWorkersAI` of workers-ai-provider (and the part of `ai` it imports), resolved with the
// export conditions wrangler uses for a Worker (workerd, worker, browser). js/cloudflare/worker.mjs
// imports it by a relative path, so `wrangler dev` / `wrangler deploy` (which bundle) and the
// tests' Miniflare (which does not) load the same file.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

await build({
  stdin: { contents: "export { createWorkersAI } from 'workers-ai-provider';", resolveDir: root, loader: 'js' },
  outfile: join(root, 'pkg-worker', 'workers-ai.mjs'),
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'neutral',
  conditions: ['workerd', 'worker', 'browser'],
  mainFields: ['module', 'main'],
  logLevel: 'warning',
});
