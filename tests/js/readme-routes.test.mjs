// README.md's routes, run as they are written: the Cloudflare Worker of "A route on
// Cloudflare Workers" in workerd (Miniflare 4, with the compatibility flag the README names)
// over the package's `workerd` entry, answering the README's own curl request; the Worker and
// wrangler.toml of "On Cloudflare: turnkeep/cloudflare" (its Durable Objects); and the Next.js
// route of "A route in Next.js", its TypeScript stripped by esbuild, its `POST` called under Node
// over the `node` entry (Next's bundling of the same route is tests/examples' job). `turnkeep`
// is mapped to the entry its export condition picks; nothing else in the snippets is changed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transformSync } from 'esbuild';
import { Miniflare } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';

const root = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(`${root}README.md`, 'utf8');
const scratch = `${root}tmp/readme-routes-${process.pid}`;
mkdirSync(scratch, { recursive: true });
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The body of the first ```lang block under `## heading`. */
function snippet(heading, lang) {
  const section = readme.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0];
  assert.ok(section, `README.md has a "${heading}" section`);
  const code = section.split(`\`\`\`${lang}\n`)[1]?.split('\n```')[0];
  assert.ok(code, `"${heading}" has a ${lang} block`);
  return code;
}

/** The route's import of 'turnkeep', pointed at `entry` (the file its export condition picks). */
function importing(code, entry) {
  const replaced = code.replace(/from 'turnkeep';/, `from '${entry}';`);
  assert.notEqual(replaced, code, 'the route imports turnkeep');
  return replaced;
}

/** The `server.turn.snapshot` payloads of an NDJSON answer, and its events in order. */
async function turnOf(response) {
  const events = (await response.text()).split('\n').filter(Boolean).map((line) => JSON.parse(line));
  return { events, snapshots: events.filter((e) => e.event === 'server.turn.snapshot').map((e) => e.payload) };
}

function assertAnswered({ events, snapshots }, input) {
  assert.ok(snapshots.length > 0, `snapshots streamed: ${JSON.stringify(events)}`);
  const last = snapshots.at(-1);
  assert.equal(last.status, 'complete');
  assert.equal(last.messages[0].role, 'user');
  assert.equal(last.messages[0].content, input);
  assert.equal(last.messages.at(-1).role, 'assistant');
  assert.ok(last.messages.at(-1).content.length > 0, 'the demo model answered');
}

test('the README Worker route answers the README curl request in workerd', async (t) => {
  const code = snippet('A route on Cloudflare Workers', 'js');
  assert.ok(code.split('\n').length <= 20, `the route is ${code.split('\n').length} lines`);
  // A newcomer reads it, and the request that tries it, within the README's first 80 lines.
  const through = readme.slice(0, readme.indexOf('\n```', readme.indexOf("-d '{")) + 4).split('\n').length;
  assert.ok(through <= 80, `the Worker route and its request end at README line ${through}`);
  writeFileSync(`${scratch}/worker.mjs`, importing(code, '../../js/workerd.mjs')); // `workerd` condition
  const flags = /compatibility_flags = (\[[^\]]*\])/.exec(readme)?.[1];
  assert.ok(flags, 'the README names the compatibility flags');
  const mf = new Miniflare({
    modules: true,
    modulesRoot: root,
    scriptPath: `${scratch}/worker.mjs`,
    modulesRules: [
      { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate: '2026-04-20',
    compatibilityFlags: JSON.parse(flags),
  });
  t.after(() => mf.dispose());
  const curl = readme.split('\n## A route on Cloudflare Workers\n')[1].split('```sh\n')[1].split('\n```')[0];
  const body = /-d '([^']+)'/.exec(curl)?.[1];
  assert.ok(body, 'the README gives a request body');
  const response = await mf.dispatchFetch('http://127.0.0.1:8787/', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  assert.equal(response.status, 200);
  assertAnswered(await turnOf(response), JSON.parse(body).payload.input);
  // The same turn id again is a replay: nothing runs twice.
  const again = await mf.dispatchFetch('http://127.0.0.1:8787/', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(again.status, 409);
  assert.equal((await again.json()).error.code, 'TURN_REPLAYED');
});

test('the README Worker on turnkeep/cloudflare runs as written, with its wrangler.toml, in workerd', async (t) => {
  const heading = 'On Cloudflare: turnkeep/cloudflare';
  const code = snippet(heading, 'js');
  assert.ok(code.split('\n').length <= 12, `the Worker is ${code.split('\n').length} lines`);
  const cloudflare = code.replaceAll("from 'turnkeep/cloudflare';", "from '../../js/cloudflare.mjs';");
  assert.notEqual(cloudflare, code, 'the Worker imports turnkeep/cloudflare');
  writeFileSync(`${scratch}/cf-worker.mjs`, importing(cloudflare, '../../js/workerd.mjs'));
  const toml = snippet(heading, 'toml').replace(/^main = .*$/m, 'main = "cf-worker.mjs"');
  writeFileSync(`${scratch}/wrangler.toml`, toml);
  const { workerOptions } = unstable_getMiniflareWorkerOptions(`${scratch}/wrangler.toml`);
  const mf = new Miniflare({
    ...workerOptions,
    modules: true,
    modulesRoot: root,
    scriptPath: `${scratch}/cf-worker.mjs`,
    modulesRules: [
      { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
  });
  t.after(() => mf.dispose());
  const body = JSON.stringify({
    protocol: 'agentskit.chat.turn', version: 1, eventId: 'e1', sessionId: 's1', turnId: 't1', sequence: 0,
    emittedAt: '2026-07-11T03:00:00.000Z', event: 'client.turn.submit', payload: { input: 'hello objects' },
  });
  const response = await mf.dispatchFetch('http://127.0.0.1:8787/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(response.status, 200);
  assertAnswered(await turnOf(response), 'hello objects');
  // Saved in the session's objects: its log projects to the conversation.
  const view = await mf.dispatchFetch('http://127.0.0.1:8787/api/chat/sessions/s1');
  assert.equal(view.status, 200);
  assert.deepEqual((await view.json()).messages.map((m) => m.content), ['hello objects', 'echo: hello objects']);
  const other = await mf.dispatchFetch('http://127.0.0.1:8787/elsewhere');
  assert.equal(other.status, 404);
  await other.arrayBuffer();
});

test('the README Next.js route authenticates and streams a turn', async () => {
  const code = snippet('A route in Next.js', 'ts');
  assert.ok(code.split('\n').length <= 25, `the route is ${code.split('\n').length} lines`);
  const js = transformSync(importing(code, pathToFileURL(`${root}js/node.mjs`).href), { loader: 'ts', format: 'esm' }).code;
  writeFileSync(`${scratch}/route.mjs`, js);
  const route = await import(pathToFileURL(`${scratch}/route.mjs`).href);
  assert.equal(route.runtime, 'edge');
  const submit = (sessionId, input) => JSON.stringify({
    protocol: 'agentskit.chat.turn', version: 1, eventId: 'e1', sessionId, turnId: 't1', sequence: 0,
    emittedAt: '2026-07-11T03:00:00.000Z', event: 'client.turn.submit', payload: { input },
  });
  const post = (headers, body) => route.POST(new Request('http://localhost/api/chat', {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body,
  }));
  const anonymous = await post({}, submit('s1', 'hello'));
  assert.equal(anonymous.status, 401);
  assert.equal(await anonymous.text(), 'sign in');
  const response = await post({ authorization: 'Bearer alice' }, submit('s1', 'hello'));
  assert.equal(response.status, 200);
  assertAnswered(await turnOf(response), 'hello');
  // The session's turn lease holds across requests: the same turn again is a replay.
  const again = await post({ authorization: 'Bearer alice' }, submit('s1', 'hello'));
  assert.equal(again.status, 409);
  assert.equal((await again.json()).error.code, 'TURN_REPLAYED');
});
