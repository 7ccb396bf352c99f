// js/browser.mjs and js/client/browser.mjs in real headless Chromium (Debian's /usr/bin/chromium
// through playwright-core): the page imports the package entry point over HTTP and drives the
// wasm core (each entry its own module).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serveStatic } from './static-server.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const roundtrip = readFileSync(new URL('./fixtures/roundtrip.mjs', import.meta.url), 'utf8')
  .replace("from 'turnkeep'", "from '/js/browser.mjs'")
  .replace('console.log(JSON.stringify({ checks, failures }));', 'window.report = { checks, failures };');

const clientRoundtrip = readFileSync(new URL('./fixtures/client-roundtrip.mjs', import.meta.url), 'utf8')
  .replace("from 'turnkeep/client'", "from '/js/client/browser.mjs'")
  .replace('console.log(JSON.stringify({ checks, failures }));', 'window.report = { checks, failures };');

const page = (script) => `<!doctype html><meta charset="utf-8"><title>turnkeep browser test</title><link rel="icon" href="data:,">
<script type="module">
window.addEventListener('error', (e) => { window.report = { checks: 0, failures: [String(e.message)] }; });
${script}
</script>`;

/** Serves the repo, loads `page` in Chromium and returns the report its script sets. */
async function runPage(t, page) {
  const server = await serveStatic(root, { '/index.html': page });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  // The browser first: it holds the server's keep-alive connections open.
  t.after(async () => {
    await browser.close();
    await server.close();
  });

  const tab = await browser.newPage();
  const errors = [];
  tab.on('pageerror', (e) => errors.push(String(e)));
  tab.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(m.text()); });
  await tab.goto(`${server.url}/index.html`);
  await tab.waitForFunction(() => window.report !== undefined, null, { timeout: 15_000 });
  const report = await tab.evaluate(() => window.report);
  assert.deepEqual(errors, [], 'the page logged errors or warnings');
  return report;
}

// A bound on each test: a Chromium that never answers fails it instead of holding CI.
test('js/browser.mjs loads in headless Chromium and round-trips events', { timeout: 120_000 }, async (t) => {
  const report = await runPage(t, page(roundtrip));
  assert.deepEqual(report.failures, []);
  assert.ok(report.checks > 0);
});

test('js/client/browser.mjs (turnkeep/client) loads its own wasm in headless Chromium and projects a log', { timeout: 120_000 }, async (t) => {
  const report = await runPage(t, page(clientRoundtrip));
  assert.deepEqual(report.failures, []);
  assert.ok(report.checks > 0);
});
