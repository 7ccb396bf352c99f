// POST /api/ask and GET /mcp/sandbox in the demo Worker (real workerd through Miniflare,
// configured from wrangler.toml): cited answers over the shipped docs corpus, the trusted site
// policy against client hints, the sandbox's resources with their CSP, and both in headless
// Chromium (the demo page's "Ask the docs" box, and the chart resource's declared script).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { launchChromium } from '../support/chromium.mjs';
import { startWorker } from './harness.mjs';

let worker;
let browser;

before(async () => {
  worker = await startWorker({ bindings: { DEMO_CHUNK_DELAY_MS: '0' } });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await worker?.stop();
});

function ask(question, { tenant = 'demo', query = '' } = {}) {
  const headers = { 'content-type': 'application/json' };
  if (tenant) headers.authorization = `Bearer ${tenant}`;
  return fetch(`${worker.url}/api/ask${query}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ protocol: 'agentskit.chat.ask', version: 1, messages: [{ role: 'user', content: question }] }),
  });
}

const events = async (response) => (await response.text()).split('\n').filter(Boolean).map((line) => JSON.parse(line));

test('POST /api/ask answers from the docs and cites the section that holds the answer', async () => {
  const cases = [
    ['How do I run the tests?', 'contributing.two-commands'],
    ['Which module may read a clock or draw randomness?', 'architecture.invariants'],
    ['How are snapshot sequences derived from the claim cursor?', 'architecture.snapshot-sequences-o1-storage-writes-per-turn'],
  ];
  for (const [question, section] of cases) {
    const response = await ask(question, { query: '?corpus=turnkeep-docs&persona=docs-guide' });
    assert.equal(response.status, 200, question);
    assert.match(response.headers.get('content-type'), /^application\/x-ndjson/);
    const lines = await events(response);
    const cite = lines.find((e) => e.type === 'tool' && e.name === 'cite');
    assert.ok(cite, `${question}: no cite event in ${JSON.stringify(lines)}`);
    assert.equal(cite.args.sources[0].id, section, `${question}: cited ${cite.args.sources.map((s) => s.id)}`);
    assert.ok(cite.args.sources.every((s) => s.path.startsWith('/docs/')), 'only site-relative citations');
    assert.equal(lines.filter((e) => e.type === 'text').map((e) => e.delta).join(''), `echo: ${question}`, 'the demo model answers');
    assert.deepEqual(lines.at(-1), { type: 'done' });
  }
});

test('POST /api/ask: the demo auth runs first, hints must match the site, ungrounded questions are 422', async () => {
  const anonymous = await ask('How do I run the tests?', { tenant: null });
  assert.equal(anonymous.status, 401);
  assert.equal((await anonymous.json()).error.code, 'AUTH_REQUIRED');

  const foreign = await ask('How do I run the tests?', { query: '?corpus=someone-elses-docs' });
  assert.equal(foreign.status, 403);
  assert.equal((await foreign.json()).error.code, 'ASK_FORBIDDEN');

  const ungrounded = await ask('zyzzyva quokka');
  assert.equal(ungrounded.status, 422);
  assert.deepEqual(await ungrounded.json(), {
    error: { code: 'ASK_NO_GROUNDED_SOURCES', message: 'No grounded sources were found for this question.', retryable: false },
  });
});

test('GET /mcp/sandbox serves ui://demo/hello and ui://demo/chart with their own CSP; bad URIs are diagnostics', async () => {
  const hello = await fetch(`${worker.url}/mcp/sandbox?uri=ui://demo/hello`);
  assert.equal(hello.status, 200);
  const helloCsp = hello.headers.get('content-security-policy');
  assert.match(helloCsp, /(^|; )default-src 'none'(;|$)/);
  assert.match(helloCsp, /(^|; )script-src 'none'(;|$)/);
  assert.match(await hello.text(), /<html data-theme="default">/);

  const dark = await (await fetch(`${worker.url}/mcp/sandbox?uri=ui://demo/hello&theme=dark`)).text();
  assert.match(dark, /<html data-theme="dark">/);
  assert.match(dark, /--ns-color-surface: #111316;/);

  const chart = await fetch(`${worker.url}/mcp/sandbox?uri=ui://demo/chart`);
  assert.equal(chart.status, 200);
  assert.match(chart.headers.get('content-security-policy'), new RegExp(`(^|; )script-src ${worker.url.replace(/\/$/, '')}(;|$)`));

  for (const [query, status, code] of [
    ['', 400, 'SANDBOX_URI_INVALID'],
    ['?uri=https://demo/hello', 400, 'SANDBOX_URI_INVALID'],
    ['?uri=ui://demo/nope', 404, 'SANDBOX_RESOURCE_NOT_FOUND'],
  ]) {
    const response = await fetch(`${worker.url}/mcp/sandbox${query}`);
    assert.equal(response.status, status, query);
    assert.equal((await response.json()).error.code, code);
  }
});

test('in Chromium: the page\'s "Ask the docs" box shows the answer and its citations; the chart\'s declared script runs', async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${worker.url}/`);
  await page.click('#ask-docs summary');
  await page.fill('#ask-input', 'How do I run the tests?');
  await page.click('#ask-send');
  await page.waitForFunction(() => document.querySelectorAll('#ask-sources li').length > 0);
  await page.waitForSelector('#ask-send:not([disabled])');
  assert.equal(await page.textContent('#ask-answer'), 'echo: How do I run the tests?');
  assert.match(await page.textContent('#ask-sources li:first-child'), /^CONTRIBUTING: Two commands/);

  await page.goto(`${worker.url}/mcp/sandbox?uri=ui://demo/chart&theme=dark`);
  await page.waitForFunction(() => document.querySelectorAll('#chart .bar').length === 5);
  assert.match(await page.textContent('#chart-status'), /^Drawn by http:\/\/127\.0\.0\.1:\d+\/mcp\/assets\/chart\.js$/);
  assert.deepEqual(errors, []);
  await page.close();
});
