// GET /mcp/sandbox for the demo Worker: createMcpSandboxHandler with two ui:// resources.
//   ui://demo/hello  no script and no external origin (its CSP allows nothing but its theme)
//   ui://demo/chart  declares one script origin: the Worker's own, which serves
//                    /mcp/assets/chart.js (the only script its CSP lets run)
import { createMcpSandboxHandler } from '../workerd.mjs';

export const CHART_SCRIPT_PATH = '/mcp/assets/chart.js';

const HELLO = `<main>
<h1>Hello from <code>ui://demo/hello</code></h1>
<p>This resource declares no origin: no script, network request or frame may load here. Its
colours come from the active theme's <code>--ns-*</code> tokens; try <code>?theme=dark</code>.</p>
</main>`;

function chart(origin) {
  return {
    body: `<main><h1><code>ui://demo/chart</code></h1><div id="chart" data-values="3,7,4,9,6"></div>
<p id="chart-status">The chart script has not run.</p>
<script src="${origin}${CHART_SCRIPT_PATH}"></script></main>`,
    csp: { resourceDomains: [origin] },
  };
}

/** The chart script: bars drawn through the DOM (the CSP allows no inline style or script). */
export const CHART_SCRIPT = `(() => {
  const box = document.getElementById('chart');
  const values = box.dataset.values.split(',').map(Number);
  const max = Math.max(...values);
  box.style.display = 'flex';
  box.style.alignItems = 'flex-end';
  box.style.gap = '6px';
  box.style.height = '120px';
  for (const value of values) {
    const bar = document.createElement('div');
    bar.className = 'bar';
    bar.style.width = '28px';
    bar.style.height = (value / max) * 100 + '%';
    bar.style.background = 'var(--ns-color-accent, #3e63dd)';
    bar.title = String(value);
    box.append(bar);
  }
  document.getElementById('chart-status').textContent = 'Drawn by ' + document.currentScript.src;
})();
`;

export const DEMO_THEMES = Object.freeze({
  default: { '--ns-color-surface': '#ffffff', '--ns-color-text': '#1c2024', '--ns-color-accent': '#3e63dd' },
  dark: { '--ns-color-surface': '#111316', '--ns-color-text': '#e6e8eb', '--ns-color-accent': '#6e8cf5' },
});

export const demoSandboxHandler = createMcpSandboxHandler({
  resolveResource(uri, { request }) {
    if (uri === 'ui://demo/hello') return HELLO;
    if (uri === 'ui://demo/chart') return chart(new URL(request.url).origin);
    return null;
  },
  themes: DEMO_THEMES,
  onError: (report) => console.error('GET /mcp/sandbox failed:', report),
});
