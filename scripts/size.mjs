// `npm run size`: what each entry of the package costs a user, raw and gzip (level 9), as a
// bundler ships it: the entry's JS bundled and minified by esbuild with that entry's export
// conditions, plus the .wasm it loads (one row per entry; `turnkeep` once per runtime). The demo
// Worker (pkg-worker/, whose module `turnkeep/cloudflare` ships for its Durable Objects) is listed last. Run scripts/build.sh first.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** The file an export target resolves to under `conditions` (Node's rule: first matching key). */
function resolveExport(target, conditions) {
  if (typeof target === 'string') return target;
  for (const [key, value] of Object.entries(target)) {
    if (key === 'default' || conditions.includes(key)) return resolveExport(value, conditions);
  }
  throw new Error(`no export matches ${conditions.join(', ')}`);
}

// Each entry loads its own wasm build (scripts/build.sh): the chat server, the browser client,
// the Ask service and the MCP sandbox are separate modules, so an import pays only for its own.
const ENTRIES = [
  { name: "'turnkeep' (workerd)", conditions: ['workerd', 'worker', 'browser'], wasm: 'pkg/turnkeep_bg.wasm' },
  { name: "'turnkeep' (edge-light)", conditions: ['edge-light', 'browser'], wasm: 'pkg/turnkeep_bg.wasm' },
  { name: "'turnkeep' (node)", conditions: ['node'], platform: 'node', wasm: 'pkg/turnkeep_bg.wasm' },
  { name: "'turnkeep' (browser)", conditions: ['browser'], wasm: 'pkg/turnkeep_bg.wasm' },
  { name: "'turnkeep/client' (browser)", subpath: './client', conditions: ['browser'], wasm: 'pkg-client/turnkeep_bg.wasm' },
  { name: "'turnkeep/ask' (workerd)", subpath: './ask', conditions: ['workerd', 'worker', 'browser'], wasm: 'pkg-ask/turnkeep_bg.wasm' },
  { name: "'turnkeep/sandbox' (workerd)", subpath: './sandbox', conditions: ['workerd', 'worker', 'browser'], wasm: 'pkg-sandbox/turnkeep_bg.wasm' },
  // Its Durable Objects are the demo Worker's build (pkg-worker/); its chat routes run on the
  // chat server's (pkg/): a Worker using it loads both (ARCHITECTURE.md, "turnkeep/cloudflare").
  { name: "'turnkeep/cloudflare' (workerd)", subpath: './cloudflare', conditions: ['workerd', 'worker', 'browser'], wasm: ['pkg/turnkeep_bg.wasm', 'pkg-worker/turnkeep_bg.wasm'] },
  { name: "'turnkeep/testing/session-storage-conformance'", subpath: './testing/session-storage-conformance', conditions: [] },
  { name: 'demo Worker (pkg-worker/)', file: 'js/cloudflare/worker.mjs', conditions: ['workerd'], wasm: 'pkg-worker/turnkeep_bg.wasm' },
];

const sizes = (bytes) => ({ raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length });
const kB = (n) => `${(n / 1000).toFixed(1)} kB`.padStart(9);

async function measure(entry) {
  const file = entry.file ?? resolveExport(pkg.exports[entry.subpath ?? '.'], entry.conditions);
  const result = await build({
    entryPoints: [join(ROOT, file)],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: entry.platform ?? 'neutral',
    conditions: entry.conditions,
    external: ['*.wasm', '*.wasm?module', '*.html', 'node:*', 'cloudflare:*'],
    write: false,
    logLevel: 'silent',
  });
  const js = sizes(result.outputFiles[0].contents);
  const wasm = { raw: 0, gzip: 0 };
  for (const module of [entry.wasm ?? []].flat()) {
    const one = sizes(readFileSync(join(ROOT, module)));
    wasm.raw += one.raw;
    wasm.gzip += one.gzip;
  }
  return { ...entry, file, js, wasm };
}

const rows = [];
for (const entry of ENTRIES) rows.push(await measure(entry));
const width = Math.max(...rows.map((r) => r.name.length));
console.log(`[size] ${'entry'.padEnd(width)}  ${'JS raw'.padStart(9)} ${'JS gzip'.padStart(9)}  ${'wasm raw'.padStart(9)} ${'wasm gzip'.padStart(9)}  ${'gzip total'.padStart(10)}`);
for (const r of rows) {
  console.log(`[size] ${r.name.padEnd(width)}  ${kB(r.js.raw)} ${kB(r.js.gzip)}  ${kB(r.wasm.raw)} ${kB(r.wasm.gzip)}  ${kB(r.js.gzip + r.wasm.gzip).padStart(10)}`);
}
console.log('[size] (kB = 1000 bytes; JS bundled and minified by esbuild with the entry\'s conditions; gzip -9)');
