// createMcpSandboxHandler in Node with Web Request/Response: ?uri= selection, 400/404 as
// versioned diagnostics, theme selection and fallback, the per-resource CSP, hostile strings
// through theme values, theme names and URIs, and the resolver's signal.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { createMcpSandboxHandler } from '../../js/sandbox/node.mjs';

const THEMES = {
  default: { '--ns-color-surface': '#ffffff', '--not-ns-token': 'ignored' },
  dark: { '--ns-color-surface': '#111111' },
};

const get = (query, init) => new Request(`https://app.example/mcp/sandbox${query}`, init);
const sandboxUrl = (uri, theme) => {
  const url = new URL('https://app.example/mcp/sandbox');
  if (uri !== undefined) url.searchParams.set('uri', uri);
  if (theme !== undefined) url.searchParams.set('theme', theme);
  return new Request(url);
};

test('a registered ui:// resource is served themed, with data-theme and a CSP of its own', async () => {
  const handler = createMcpSandboxHandler({
    resolveResource: (uri) => ({
      'ui://demo/hello': '<main id="widget">Hello</main>',
      'ui://demo/chart': { body: '<script src="https://cdn.example.com/chart.js"></script>', csp: { resourceDomains: ['https://cdn.example.com'] } },
    })[uri],
    themes: THEMES,
  });
  const hello = await handler(sandboxUrl('ui://demo/hello'));
  assert.equal(hello.status, 200);
  assert.equal(hello.headers.get('content-type'), 'text/html; charset=utf-8');
  const helloCsp = hello.headers.get('content-security-policy');
  const html = await hello.text();
  assert.match(html, /^<!doctype html>\n<html data-theme="default">/);
  assert.match(html, /--ns-color-surface: #ffffff;/);
  assert.doesNotMatch(html, /--not-ns-token/);
  assert.ok(html.indexOf('</style>') < html.indexOf('<main id="widget">Hello</main>'), 'theme before the body');
  assert.match(helloCsp, /^default-src 'none'; script-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; img-src data:;/);

  const chart = await handler(sandboxUrl('ui://demo/chart'));
  const chartCsp = chart.headers.get('content-security-policy');
  assert.match(chartCsp, /; script-src https:\/\/cdn\.example\.com;/);
  assert.match(chartCsp, /; connect-src 'none';/);
  assert.notEqual(chartCsp, helloCsp, 'the CSP is per resource');
});

test('?theme= selects a token set; absent, blank or unknown falls back to the default theme', async () => {
  const handler = createMcpSandboxHandler({ resolveResource: () => '<p>x</p>', themes: THEMES });
  for (const [theme, name, surface] of [['dark', 'dark', '#111111'], [undefined, 'default', '#ffffff'], ['', 'default', '#ffffff'], ['unknown', 'default', '#ffffff']]) {
    const html = await (await handler(sandboxUrl('ui://demo/x', theme))).text();
    assert.match(html, new RegExp(`<html data-theme="${name}">`), String(theme));
    assert.match(html, new RegExp(`--ns-color-surface: ${surface};`), String(theme));
  }
  const custom = createMcpSandboxHandler({ resolveResource: () => '<p>x</p>', themes: { light: {}, dark: {} }, defaultThemeName: 'dark' });
  assert.match(await (await custom(sandboxUrl('ui://demo/x', 'nope'))).text(), /data-theme="dark"/);
  const firstTheme = createMcpSandboxHandler({ resolveResource: () => '<p>x</p>', themes: { dark: { '--ns-a': '1' } } });
  assert.match(await (await firstTheme(sandboxUrl('ui://demo/x'))).text(), /data-theme="dark"/);
});

test('missing, invalid or non-ui:// URIs are 400 and unknown ones 404, as versioned diagnostics; the resolver never sees a bad URI', async () => {
  const seen = [];
  const handler = createMcpSandboxHandler({ resolveResource: (uri) => { seen.push(uri); return null; }, themes: THEMES });
  for (const [request, status, code] of [
    [get(''), 400, 'SANDBOX_URI_INVALID'],
    [sandboxUrl('https://widgets.example/card.js'), 400, 'SANDBOX_URI_INVALID'],
    [sandboxUrl('ui://demo/"><script>alert(1)</script>'), 400, 'SANDBOX_URI_INVALID'],
    [sandboxUrl('javascript:alert(document.domain)'), 400, 'SANDBOX_URI_INVALID'],
    [sandboxUrl('ui://demo/unknown'), 404, 'SANDBOX_RESOURCE_NOT_FOUND'],
    [get('?uri=ui://demo/x', { method: 'POST', body: 'x' }), 405, 'REQUEST_METHOD_NOT_ALLOWED'],
  ]) {
    const response = await handler(request);
    assert.equal(response.status, status, request.url);
    assert.equal(response.headers.get('content-security-policy'), null);
    const text = await response.text();
    assert.doesNotMatch(text, /script|javascript|widgets/, 'nothing of the request is echoed');
    const body = JSON.parse(text);
    assert.equal(body.error.version, 1);
    assert.equal(body.error.code, code);
  }
  assert.deepEqual(seen, ['ui://demo/unknown']);
});

test('hostile theme values, theme names and declared origins are neutralised', async () => {
  const hostileValue = 'red; } body { background: url(https://evil.example/x) } </style><script>alert(1)</script>';
  const hostileName = '"><script>alert(1)</script>';
  const handler = createMcpSandboxHandler({
    resolveResource: (uri) => (uri === 'ui://demo/bad-csp' ? { body: '<p>x</p>', csp: { resourceDomains: ["https://a.example; script-src 'unsafe-inline'"] } } : '<p>ok</p>'),
    themes: { [hostileName]: { '--ns-color-surface': hostileValue } },
    defaultThemeName: hostileName,
  });
  const html = await (await handler(sandboxUrl('ui://demo/x', hostileName))).text();
  assert.equal(html.match(/<script/g), null, html);
  assert.equal(html.match(/<\/style>/g).length, 1);
  assert.match(html, /<html data-theme="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;">/);
  const style = /<style data-turnkeep-theme>([\s\S]*?)<\/style>/.exec(html)[1];
  assert.equal(style.match(/[{}]/g).length, 4, 'only the two rule blocks of the sandbox itself');
  assert.doesNotMatch(style, /;\s*}\s*body\s*{\s*background/);

  const bad = await handler(sandboxUrl('ui://demo/bad-csp'));
  assert.equal(bad.status, 500);
  assert.equal((await bad.json()).error.code, 'SANDBOX_RESOURCE_INVALID');
});

test("the resolver receives the request and the request's own signal; its failures are safe", async () => {
  const controller = new AbortController();
  let context;
  const handler = createMcpSandboxHandler({ resolveResource: (_uri, ctx) => { context = ctx; return '<p>ok</p>'; }, themes: THEMES });
  const request = new Request('https://app.example/mcp/sandbox?uri=ui://demo/x', { signal: controller.signal });
  assert.equal((await handler(request)).status, 200);
  assert.equal(context.signal, request.signal);
  assert.equal(context.request, request);
  assert.equal(context.signal.aborted, false);
  controller.abort();
  assert.equal(context.signal.aborted, true);

  const errors = [];
  const throwing = createMcpSandboxHandler({ resolveResource: () => { throw new Error('registry password'); }, themes: THEMES, onError: (r) => errors.push(r) });
  const failed = await throwing(sandboxUrl('ui://demo/x'));
  assert.equal(failed.status, 500);
  assert.doesNotMatch(await failed.text(), /password/);
  assert.match(errors[0].cause, /registry password/);

  const aborting = new AbortController();
  const cancelled = createMcpSandboxHandler({
    resolveResource: (_uri, { signal }) => new Promise((_, reject) => { signal.addEventListener('abort', () => reject(signal.reason)); aborting.abort(); }),
  });
  const gone = await cancelled(new Request('https://app.example/mcp/sandbox?uri=ui://demo/x', { signal: aborting.signal }));
  assert.equal(gone.status, 499);
  assert.equal((await gone.json()).error.code, 'REQUEST_CANCELLED');

  const head = await handler(new Request('https://app.example/mcp/sandbox?uri=ui://demo/x', { method: 'HEAD' }));
  assert.equal(head.status, 200);
  assert.ok(head.headers.get('content-security-policy'));

  assert.throws(() => createMcpSandboxHandler({}), (e) => e.code === 'SANDBOX_INVALID_CONFIG');
  assert.throws(() => createMcpSandboxHandler({ resolveResource: () => null, themes: { x: { '--ns-a': 1 } } }), (e) => e.code === 'SANDBOX_INVALID_CONFIG');
});
