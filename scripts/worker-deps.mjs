// The demo Worker's one JS dependency, bundled by scripts/build.sh into pkg-worker/workers-ai.mjs:
// `createWorkersAI` of workers-ai-provider, resolved with the export conditions wrangler uses for
// a Worker (workerd, worker, browser). js/cloudflare/worker.mjs imports it by a relative path, so
// `wrangler dev` / `wrangler deploy` (which bundle) and the tests' Miniflare (which does not) load
// the same file. workers-ai-provider imports one name from `ai`, `generateId`, which `ai`
// re-exports from @ai-sdk/provider-utils: taken from there, the bundle is 60 kB gzip smaller
// (esbuild keeps most of `ai`'s module for its side effects).
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const generateIdOnly = {
  name: 'ai-generate-id',
  setup(b) {
    b.onResolve({ filter: /^ai$/ }, () => ({ path: 'ai', namespace: 'ai-shim' }));
    b.onLoad({ filter: /.*/, namespace: 'ai-shim' }, () => ({
      contents: "export { generateId } from '@ai-sdk/provider-utils';",
      resolveDir: root,
      loader: 'js',
    }));
  },
};

await build({
  plugins: [generateIdOnly],
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
