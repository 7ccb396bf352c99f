// Writes demo-assets/, the demo Worker's static assets (wrangler.toml [assets]):
//   /turnkeep/js/client/*.mjs, /turnkeep/js/protocol.mjs, /turnkeep/js/content-part.mjs,
//   /turnkeep/pkg-client/turnkeep.js,
//   /turnkeep/pkg-client/turnkeep_bg.wasm
//       the npm package's browser client (`turnkeep/client`), as a page imports it: the same
//       projection and renderer the server runs, and the live connection's rules
//   /demo/page.mjs   the demo page's script (js/cloudflare/demo/)
// Copies, laid out as the package is, so `js/client/browser.mjs` finds `../../pkg-client/` where
// it expects it. Run by scripts/build.sh after pkg-client/ is built. Idempotent.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'demo-assets');

/** The client's entries for other runtimes (Node, workerd, edge-light): never loaded by a page. */
const NOT_FOR_BROWSERS = new Set(['node.mjs', 'workerd.mjs', 'edge-light.mjs']);

const copies = [
  ...readdirSync(join(root, 'js/client'))
    .filter((name) => name.endsWith('.mjs') && !NOT_FOR_BROWSERS.has(name))
    .map((name) => [`js/client/${name}`, `turnkeep/js/client/${name}`]),
  ['js/protocol.mjs', 'turnkeep/js/protocol.mjs'],
  ['js/content-part.mjs', 'turnkeep/js/content-part.mjs'], // js/client/api.mjs imports it
  ['pkg-client/turnkeep.js', 'turnkeep/pkg-client/turnkeep.js'],
  ['pkg-client/turnkeep_bg.wasm', 'turnkeep/pkg-client/turnkeep_bg.wasm'],
  ...readdirSync(join(root, 'js/cloudflare/demo')).map((name) => [`js/cloudflare/demo/${name}`, `demo/${name}`]),
];

rmSync(out, { recursive: true, force: true });
for (const [from, to] of copies) {
  mkdirSync(dirname(join(out, to)), { recursive: true });
  copyFileSync(join(root, from), join(out, to));
}
console.log(`[build] wrote demo-assets/ (${copies.length} files)`);
