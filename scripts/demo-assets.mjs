// Writes demo-assets/, the demo Worker's static assets (wrangler.toml [assets]):
//   /turnkeep/js/*.mjs, /turnkeep/pkg/turnkeep.js, /turnkeep/pkg/turnkeep_bg.wasm
//       the npm package's browser entry, as a page imports it (the same wasm the server runs:
//       the projection, the renderer, the live connection's rules)
//   /demo/page.mjs   the demo page's script (js/cloudflare/demo/)
// Copies, laid out as the package is, so `js/browser.mjs` finds `../pkg/` where it expects it.
// Run by scripts/build.sh after pkg/ is built. Idempotent.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'demo-assets');

/** Entries for other runtimes (Node, workerd, edge-light) and the database adapters: never loaded by a page. */
const NOT_FOR_BROWSERS = new Set(['node.mjs', 'workerd.mjs', 'edge-light.mjs', 'redis.mjs', 'postgres.mjs']);

const copies = [
  ...readdirSync(join(root, 'js'))
    .filter((name) => name.endsWith('.mjs') && !NOT_FOR_BROWSERS.has(name))
    .map((name) => [`js/${name}`, `turnkeep/js/${name}`]),
  ['pkg/turnkeep.js', 'turnkeep/pkg/turnkeep.js'],
  ['pkg/turnkeep_bg.wasm', 'turnkeep/pkg/turnkeep_bg.wasm'],
  ...readdirSync(join(root, 'js/cloudflare/demo')).map((name) => [`js/cloudflare/demo/${name}`, `demo/${name}`]),
];

rmSync(out, { recursive: true, force: true });
for (const [from, to] of copies) {
  mkdirSync(dirname(join(out, to)), { recursive: true });
  copyFileSync(join(root, from), join(out, to));
}
console.log(`[build] wrote demo-assets/ (${copies.length} files)`);
