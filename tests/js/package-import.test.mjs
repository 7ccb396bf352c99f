// The npm package as a user gets it: `npm pack`, install the tarball into a fresh project
// (offline: the package has no runtime dependencies), then import 'turnkeep' in a child Node
// process and drive the wasm core through it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const quiet = ['--no-audit', '--no-fund', '--loglevel=error'];

test('the packed tarball installs offline and imports in Node', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'turnkeep-pack-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', dir, ...quiet], { cwd: root }));
  const files = packed[0].files.map((f) => f.path);
  for (const needed of ['package.json', 'README.md', 'js/node.mjs', 'js/browser.mjs', 'js/workerd.mjs', 'js/edge-light.mjs', 'js/protocol.mjs', 'js/index.d.ts', 'js/testing/session-storage-conformance.mjs', 'js/testing/session-log-conformance.mjs', 'js/testing/chat-memory-conformance.mjs', 'js/errors.mjs', 'js/redis.mjs', 'js/redis.d.ts', 'js/postgres.mjs', 'js/postgres.d.ts', 'pkg/turnkeep.js', 'pkg/turnkeep_bg.wasm',
    'js/client.d.ts', 'js/client/node.mjs', 'js/client/browser.mjs', 'js/client/workerd.mjs', 'js/client/edge-light.mjs', 'js/client/connection.mjs', 'pkg-client/turnkeep.js', 'pkg-client/turnkeep_bg.wasm',
    'js/ask.d.ts', 'js/ask/node.mjs', 'js/ask/workerd.mjs', 'pkg-ask/turnkeep.js', 'pkg-ask/turnkeep_bg.wasm',
    'js/sandbox.d.ts', 'js/sandbox/node.mjs', 'js/sandbox/workerd.mjs', 'pkg-sandbox/turnkeep.js', 'pkg-sandbox/turnkeep_bg.wasm',
    'js/cloudflare.d.ts', 'js/cloudflare.mjs', 'pkg-worker/turnkeep.js', 'pkg-worker/turnkeep_bg.wasm']) {
    assert.ok(files.includes(needed), `tarball lacks ${needed}: ${files.join(', ')}`);
  }
  assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('target/')), 'tarball must not carry Rust sources or build output');
  // Lean package (scripts/build.sh): no demo Worker (its page, routes' JS, Workers AI bundle),
  // no test build; of the Worker build only the module and glue `turnkeep/cloudflare` loads for
  // its Durable Objects; and the chat server's wasm exports neither the Durable Object stores
  // nor the test hooks.
  // (tests/js/shipped-hooks.test.mjs checks every shipped build for test and bench hooks.)
  assert.deepEqual(files.filter((f) => f.startsWith('js/cloudflare/') || f.startsWith('pkg-worker-test')), []);
  assert.deepEqual(files.filter((f) => f.startsWith('pkg-worker/') && !/^pkg-worker\/(turnkeep\.js|turnkeep_bg\.wasm|snippets\/.+)$/.test(f)), []);
  // Everything `turnkeep/cloudflare` imports is in the tarball (it loads only in workerd, so
  // this walks its imports; examples/cloudflare-worker runs it from the tarball in workerd).
  const cloudflare = installedExport(root, './cloudflare', 'workerd');
  for (const file of importClosure(root, cloudflare)) assert.ok(files.includes(file), `turnkeep/cloudflare needs ${file}, which the tarball lacks`);
  const glue = readFileSync(join(root, 'pkg/turnkeep.js'), 'utf8');
  for (const name of ['ChatSessionStore', 'SessionStreamCore', '__streamModelForTest', '__sessionStorageForTest', '__snapshotCountsForBench']) {
    assert.ok(!glue.includes(name), `the npm glue exports ${name}`);
  }
  assert.ok(!glue.includes('import.meta.url'), 'the glue must not point bundlers at a second copy of the wasm');
  // One wasm per entry: the chat server's module carries neither the browser client, the Ask
  // service nor the sandbox, and each of those carries no chat handler.
  for (const name of ['ChatConnectionCore', 'createAskServiceHandler', 'createMcpSandboxHandler']) {
    assert.ok(!glue.includes(name), `the chat server's glue (pkg/) exports ${name}`);
  }
  for (const dir of ['pkg-client', 'pkg-ask', 'pkg-sandbox']) {
    const other = readFileSync(join(root, dir, 'turnkeep.js'), 'utf8');
    assert.ok(!other.includes('createChatHandler'), `${dir}/ exports createChatHandler`);
    assert.ok(!other.includes('import.meta.url'), `${dir}/turnkeep.js points bundlers at a second copy of the wasm`);
  }

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

  // turnkeep/client, turnkeep/ask and turnkeep/sandbox load their own wasm and work.
  writeFileSync(join(project, 'client.mjs'), readFileSync(new URL('./fixtures/client-roundtrip.mjs', import.meta.url)));
  const clientOut = execFileSync(process.execPath, ['client.mjs'], { cwd: project, encoding: 'utf8' });
  const clientReport = JSON.parse(clientOut);
  assert.deepEqual(clientReport.failures, [], `turnkeep/client from the installed package failed:\n${clientOut}`);
  assert.ok(clientReport.checks > 0);
  writeFileSync(join(project, 'services.mjs'), SERVICES_SCRIPT);
  const services = JSON.parse(execFileSync(process.execPath, ['services.mjs'], { cwd: project, encoding: 'utf8' }));
  assert.deepEqual(services, {
    ask: ['LocalRetriever', 'createAskServiceHandler', 'createDemoModel', 'createLocalRetriever', 'createOpenAICompatibleModel', 'toNodeHandler'],
    askBadOptions: 'ASK_INTERNAL',
    sandbox: ['createMcpSandboxHandler', 'toNodeHandler'],
    sandboxServed: [200, true],
  });

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

const SERVICES_SCRIPT = `
import * as ask from 'turnkeep/ask';
import * as sandbox from 'turnkeep/sandbox';
const code = (fn) => { try { fn(); return 'no error'; } catch (e) { return e.code; } };
const handler = sandbox.createMcpSandboxHandler({ resolveResource: (uri) => (uri === 'ui://a/b' ? '<p>hi</p>' : null), themes: { default: {} } });
const served = await handler(new Request('https://app.example/sandbox?uri=' + encodeURIComponent('ui://a/b')));
console.log(JSON.stringify({
  ask: Object.keys(ask).sort(),
  askBadOptions: code(() => ask.createAskServiceHandler({})),
  sandbox: Object.keys(sandbox).sort(),
  sandboxServed: [served.status, (await served.text()).includes('<p>hi</p>')],
}));
`;

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

/** The file `subpath` resolves to under `condition` (package.json "exports"). */
function installedExport(dir, subpath, condition) {
  const target = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).exports[subpath];
  assert.ok(target?.[condition], `package.json exports ${subpath} has no ${condition} condition`);
  return target[condition].replace(/^\.\//, '');
}

/** `file` and every file its relative imports reach (paths relative to `dir`). */
function importClosure(dir, file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  if (!/\.m?js$/.test(file)) return seen;
  const source = readFileSync(join(dir, file), 'utf8');
  for (const m of source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s*(['"])(\.[^'"]+)\1/g)) {
    importClosure(dir, join(dirname(file), m[2]), seen);
  }
  return seen;
}
