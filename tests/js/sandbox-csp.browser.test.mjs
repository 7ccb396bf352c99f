// The sandbox's CSP enforced by a real browser (headless Chromium via playwright-core): a ui://
// resource loads a script from the origin it declared and one from an origin it did not. Only
// the declared one runs; the undeclared one is never even requested; inline script never runs;
// the sandbox's own theme style (allowed by its hash) applies; hostile theme strings stay inert.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';

import { createMcpSandboxHandler, toNodeHandler } from '../../js/sandbox/node.mjs';
import { launchChromium } from '../support/chromium.mjs';

/** A node:http server on 127.0.0.1; `requests` lists the paths it was asked for. */
async function serve(handler) {
  const requests = [];
  const server = createServer((req, res) => {
    requests.push(req.url);
    handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, requests, origin: `http://127.0.0.1:${server.address().port}` };
}

const script = (body) => (req, res) => res.writeHead(200, { 'content-type': 'text/javascript' }).end(body);

let declared;
let undeclared;
let sandbox;
let browser;

before(async () => {
  declared = await serve(script("window.__declared = 'ran';"));
  undeclared = await serve(script("window.__undeclared = 'ran';"));
  const handler = createMcpSandboxHandler({
    resolveResource(uri) {
      if (uri === 'ui://test/widget') {
        return {
          body: [
            '<p id="widget">widget</p>',
            `<script src="${declared.origin}/ok.js"></script>`,
            `<script src="${undeclared.origin}/evil.js"></script>`,
            "<script>window.__inline = 'ran';</script>",
            `<img id="pixel" src="${undeclared.origin}/pixel.png">`,
          ].join('\n'),
          csp: { resourceDomains: [declared.origin] },
        };
      }
      if (uri === 'ui://test/plain') return '<p id="plain">plain</p><img src="x" onerror="window.__onerror = \'ran\'">';
      return null;
    },
    themes: {
      default: { '--ns-color-surface': 'rgb(255, 255, 255)' },
      dark: { '--ns-color-surface': 'rgb(17, 17, 17)' },
      hostile: { '--ns-color-surface': "red; } </style><script>window.__pwned = 'ran'</script><style> body { background: blue" },
      '"><script>window.__pwnedName = \'ran\'</script>': { '--ns-color-surface': 'rgb(1, 2, 3)' },
    },
  });
  sandbox = await serve(toNodeHandler(handler));
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  for (const s of [declared, undeclared, sandbox]) s?.server.close();
});

/** Opens a sandbox URL and returns what the page saw: flags, violations, computed style. */
async function open(query) {
  const page = await browser.newPage();
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push({ directive: e.effectiveDirective, blocked: e.blockedURI }));
  });
  const response = await page.goto(`${sandbox.origin}/mcp/sandbox${query}`);
  await page.waitForLoadState('load');
  await page.waitForTimeout(50); // violation events are dispatched asynchronously (not a timing assertion)
  const seen = await page.evaluate(() => ({
    declared: window.__declared,
    undeclared: window.__undeclared,
    inline: window.__inline,
    onerror: window.__onerror,
    pwned: window.__pwned,
    pwnedName: window.__pwnedName,
    violations: window.__violations,
    background: getComputedStyle(document.body).backgroundColor,
    theme: document.documentElement.dataset.theme,
  }));
  await page.close();
  return { status: response.status(), ...seen };
}

test('Chromium runs the script from the declared origin and blocks the undeclared one and inline script', async () => {
  const seen = await open('?uri=ui://test/widget&theme=dark');
  assert.equal(seen.status, 200);
  assert.equal(seen.declared, 'ran', 'the declared origin may run scripts');
  assert.equal(seen.undeclared, undefined, 'an undeclared origin may not');
  assert.equal(seen.inline, undefined, 'inline script never runs');
  assert.ok(seen.violations.some((v) => v.directive === 'script-src-elem' && v.blocked.startsWith(undeclared.origin)), JSON.stringify(seen.violations));
  assert.ok(seen.violations.some((v) => v.directive === 'script-src-elem' && v.blocked === 'inline'), JSON.stringify(seen.violations));
  assert.ok(seen.violations.some((v) => v.directive === 'img-src' && v.blocked.startsWith(undeclared.origin)), JSON.stringify(seen.violations));
  assert.deepEqual(undeclared.requests, [], 'the browser never fetched from the undeclared origin');
  assert.deepEqual(declared.requests, ['/ok.js']);
  assert.equal(seen.background, 'rgb(17, 17, 17)', "the theme style runs: its hash in the CSP matches the browser's");
  assert.equal(seen.theme, 'dark');
});

test('a resource that declares nothing runs no script at all, not even an inline handler', async () => {
  const seen = await open('?uri=ui://test/plain');
  assert.equal(seen.onerror, undefined);
  assert.equal(seen.background, 'rgb(255, 255, 255)', 'an absent theme falls back to the default');
  assert.equal(seen.theme, 'default');
});

test('hostile theme values and names cannot inject script or style in Chromium', async () => {
  const value = await open('?uri=ui://test/plain&theme=hostile');
  assert.equal(value.pwned, undefined);
  assert.notEqual(value.background, 'rgb(0, 0, 255)', 'the value could not open a rule of its own');
  const name = await open(`?uri=ui://test/plain&theme=${encodeURIComponent('"><script>window.__pwnedName = \'ran\'</script>')}`);
  assert.equal(name.pwnedName, undefined);
  assert.equal(name.theme, '"><script>window.__pwnedName = \'ran\'</script>', 'the name is data, stamped as is');
  assert.equal(name.background, 'rgb(1, 2, 3)');
});
