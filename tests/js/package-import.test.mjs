// The npm package as a user gets it: `npm pack`, install the tarball into a fresh project
// (offline: the package has no runtime dependencies), then import 'turnkeep' in a child Node
// process and drive the wasm core through it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const quiet = ['--no-audit', '--no-fund', '--loglevel=error'];

test('the packed tarball installs offline and imports in Node', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'turnkeep-pack-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', dir, ...quiet], { cwd: root }));
  const files = packed[0].files.map((f) => f.path);
  for (const needed of ['package.json', 'README.md', 'js/node.mjs', 'js/browser.mjs', 'js/workerd.mjs', 'js/edge-light.mjs', 'js/protocol.mjs', 'js/index.d.ts', 'js/testing/session-storage-conformance.mjs', 'js/testing/session-log-conformance.mjs', 'js/errors.mjs', 'js/redis.mjs', 'js/redis.d.ts', 'js/postgres.mjs', 'js/postgres.d.ts', 'pkg/turnkeep.js', 'pkg/turnkeep_bg.wasm']) {
    assert.ok(files.includes(needed), `tarball lacks ${needed}: ${files.join(', ')}`);
  }
  assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('target/')), 'tarball must not carry Rust sources or build output');
  // Lean package (scripts/build.sh): no demo Worker, no Worker build, and the shipped wasm
  // exports neither the Durable Object stores nor the test hooks.
  assert.deepEqual(files.filter((f) => f.startsWith('js/cloudflare/') || f.startsWith('pkg-worker/')), []);
  const glue = readFileSync(join(root, 'pkg/turnkeep.js'), 'utf8');
  for (const name of ['ChatSessionStore', 'SessionStreamCore', '__streamModelForTest', '__sessionStorageForTest']) {
    assert.ok(!glue.includes(name), `the npm glue exports ${name}`);
  }
  assert.ok(!glue.includes('import.meta.url'), 'the glue must not point bundlers at a second copy of the wasm');

  const project = join(dir, 'app');
  execFileSync('mkdir', ['-p', project]);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  execFileSync(npm, ['install', '--offline', ...quiet, join(dir, packed[0].filename)], { cwd: project });
  const installed = JSON.parse(readFileSync(join(project, 'node_modules/turnkeep/package.json'), 'utf8'));
  assert.equal(installed.name, 'turnkeep');

  writeFileSync(join(project, 'main.mjs'), readFileSync(new URL('./fixtures/roundtrip.mjs', import.meta.url)));
  const out = execFileSync(process.execPath, ['main.mjs'], { cwd: project, encoding: 'utf8' });
  const report = JSON.parse(out);
  assert.deepEqual(report.failures, [], `round trip through the installed package failed:\n${out}`);
  assert.ok(report.checks > 0);

  // The storage subpaths resolve from the installed package and reject a client they cannot use.
  writeFileSync(join(project, 'stores.mjs'), STORES_SCRIPT);
  const stores = JSON.parse(execFileSync(process.execPath, ['stores.mjs'], { cwd: project, encoding: 'utf8' }));
  assert.deepEqual(stores, {
    redis: ['REDIS_PREFIX_DEFAULT', 'createRedisChatMemory', 'createRedisSessionLog', 'createRedisSessionLogStore', 'createRedisSessionStorage'],
    postgres: [
      'POSTGRES_MIGRATION_SQL',
      'createPostgresChatMemory',
      'createPostgresSessionLog',
      'createPostgresSessionLogStore',
      'createPostgresSessionStorage',
      'migratePostgres',
    ],
    badClient: ['SERVER_INVALID_CONFIG', 'SERVER_INVALID_CONFIG'],
  });
});

const STORES_SCRIPT = `
import * as redis from 'turnkeep/redis';
import * as postgres from 'turnkeep/postgres';
const code = (fn) => { try { fn(); return 'no error'; } catch (e) { return e.code; } };
console.log(JSON.stringify({
  redis: Object.keys(redis).sort(),
  postgres: Object.keys(postgres).sort(),
  badClient: [code(() => redis.createRedisSessionStorage({ client: {} })), code(() => postgres.createPostgresSessionStorage({ client: {} }))],
}));
`;
