// js/index.d.ts (and the .d.ts of each subpath export) declares exactly what the package exports
// at runtime: every runtime export has a declaration, and every declared function, class or
// constant exists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const dts = readFileSync(new URL('../../js/index.d.ts', import.meta.url), 'utf8');

/** Names of value declarations (`export function|class|const|let|var NAME`), and of values
 * re-exported from another declaration file (`export { a, b } from './index.js'`). */
function declaredValues(source) {
  const names = new Set();
  for (const m of source.matchAll(/^export\s+(?:declare\s+)?(?:function|class|const|let|var)\s+([A-Za-z_$][\w$]*)/gm)) {
    names.add(m[1]);
  }
  for (const m of source.matchAll(/^export\s*\{([^}]*)\}\s*from/gm)) {
    for (const name of m[1].split(',').map((n) => n.trim()).filter(Boolean)) names.add(name);
  }
  return names;
}

// Test-only hooks (`__…ForTest`) are deliberately undeclared.
const isPublic = (name) => !name.startsWith('__');

for (const entry of ['node.mjs']) {
  test(`index.d.ts matches the runtime exports of js/${entry}`, async () => {
    const runtime = new Set(Object.keys(await import(`../../js/${entry}`)).filter(isPublic));
    const declared = declaredValues(dts);
    const undeclared = [...runtime].filter((n) => !declared.has(n)).sort();
    const missing = [...declared].filter((n) => !runtime.has(n)).sort();
    assert.deepEqual(undeclared, [], `exported but not typed in js/index.d.ts: ${undeclared.join(', ')}`);
    assert.deepEqual(missing, [], `typed in js/index.d.ts but not exported: ${missing.join(', ')}`);
  });
}

test('index.d.ts type-checks with typical usage under tsc --strict', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const tsc = `${root}node_modules/typescript/bin/tsc`;
  const args = [
    tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext',
    '--moduleResolution', 'nodenext', '--lib', 'es2022,dom', '--types', 'node',
    'js/index.d.ts', 'tests/js/fixtures/types-usage.ts',
  ];
  const run = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  assert.equal(run.status, 0, `tsc reported:\n${run.stdout}${run.stderr}`);
});

for (const [entry, types] of [
  ['redis.mjs', 'redis.d.ts'],
  ['postgres.mjs', 'postgres.d.ts'],
  ['client/node.mjs', 'client.d.ts'],
  ['ask/node.mjs', 'ask.d.ts'],
  ['sandbox/node.mjs', 'sandbox.d.ts'],
]) {
  test(`${types} matches the runtime exports of js/${entry}`, async () => {
    const runtime = new Set(Object.keys(await import(`../../js/${entry}`)));
    const declared = declaredValues(readFileSync(new URL(`../../js/${types}`, import.meta.url), 'utf8'));
    assert.deepEqual([...runtime].sort(), [...declared].sort());
  });
}

test('the store types accept the real clients (redis, ioredis, @upstash/redis, pg, postgres) under tsc --strict', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const args = [
    `${root}node_modules/typescript/bin/tsc`, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext',
    '--moduleResolution', 'nodenext', '--lib', 'es2022,dom', '--types', 'node', '--skipLibCheck',
    'tests/js/fixtures/stores-usage.ts',
  ];
  const run = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  assert.equal(run.status, 0, `tsc reported:\n${run.stdout}${run.stderr}`);
});

// `turnkeep/cloudflare` loads only in workerd (it imports `cloudflare:workers` and a compiled
// `.wasm`), so its exports are read from its source here; tests/workerd/storage-worker.mjs and
// examples/cloudflare-worker import them in workerd.
test('cloudflare.d.ts declares exactly what js/cloudflare.mjs exports', () => {
  const source = readFileSync(new URL('../../js/cloudflare.mjs', import.meta.url), 'utf8');
  const declared = declaredValues(readFileSync(new URL('../../js/cloudflare.d.ts', import.meta.url), 'utf8'));
  assert.deepEqual([...declaredValues(source)].sort(), [...declared].sort());
});

test('cloudflare.d.ts type-checks with a Worker\'s usage under tsc --strict', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const args = [
    `${root}node_modules/typescript/bin/tsc`, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext',
    '--moduleResolution', 'nodenext', '--lib', 'es2022,dom', '--types', 'node',
    'js/cloudflare.d.ts', 'tests/js/fixtures/cloudflare-usage.ts',
  ];
  const run = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  assert.equal(run.status, 0, `tsc reported:\n${run.stdout}${run.stderr}`);
});
