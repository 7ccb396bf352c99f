// The demo Worker. For now it only proves the package loads in workerd: GET / decodes a
// sample event with the wasm core and shows the result.
import { decodeTurnEvent, version } from './workerd.mjs';

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname !== '/') return new Response('not found\n', { status: 404 });
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return new Response('method not allowed\n', { status: 405, headers: { allow: 'GET, HEAD' } });
    }
    return new Response(page(), { headers: { 'content-type': 'text/html; charset=utf-8' } });
  },
};

const SAMPLE = {
  protocol: 'agentskit.chat.turn', version: 1, eventId: 'e1', sessionId: 's1', turnId: 't1',
  sequence: 0, emittedAt: '2026-07-11T03:00:00.000Z', event: 'client.turn.submit',
  payload: { input: 'hello from the demo Worker' },
};

function page() {
  const decoded = decodeTurnEvent({ ...SAMPLE, note: 'unknown fields are dropped' });
  return `<!doctype html><meta charset="utf-8"><title>turnkeep</title>
<h1>turnkeep is alive</h1>
<p>wasm core ${escapeHtml(version())}, decoding a sample <code>client.turn.submit</code>:</p>
<pre>${escapeHtml(JSON.stringify(decoded, null, 2))}</pre>`;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
