// js/browser.mjs in real headless Chromium (Debian's /usr/bin/chromium through playwright-core):
// the page imports the package entry point over HTTP and drives the wasm core.
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

const PAGE = `<!doctype html><meta charset="utf-8"><title>turnkeep browser test</title><link rel="icon" href="data:,">
<script type="module">
window.addEventListener('error', (e) => { window.report = { checks: 0, failures: [String(e.message)] }; });
${roundtrip}
</script>`;

// A bound on the whole test: a Chromium that never answers fails it instead of holding CI.
test('js/browser.mjs loads in headless Chromium and round-trips events', { timeout: 120_000 }, async (t) => {
  const server = await serveStatic(root, { '/index.html': PAGE });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  // The browser first: it holds the server's keep-alive connections open.
  t.after(async () => {
    await browser.close();
    await server.close();
  });

  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(m.text()); });
  await page.goto(`${server.url}/index.html`);
  await page.waitForFunction(() => window.report !== undefined, null, { timeout: 15_000 });
  const report = await page.evaluate(() => window.report);

  assert.deepEqual(errors, [], 'the page logged errors or warnings');
  assert.deepEqual(report.failures, []);
  assert.ok(report.checks > 0);
});
