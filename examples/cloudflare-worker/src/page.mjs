// The example's one page, `GET /?session=<id>`: the conversation from the session's log, live.
// It takes its seed from `GET /api/chat/sessions/:id` (the log's projection), then follows the
// log with turnkeep/client's createChatConnection (one read of `GET /api/chat/stream/:id`, from
// the seed's offset), so a reload mid-answer shows the answer so far and the rest as it comes,
// and a turn sent from another tab shows too. Send posts the turn through the same connection;
// Stop asks the server to stop the running turn (whichever tab sent it), and the answer so far
// is kept.
// No build step beyond copying the client (`npm run build`), no framework; the user is `guest`.

const SCRIPT = `
import { createChatConnection } from '/turnkeep/js/client/browser.mjs';

const sessionId = new URLSearchParams(location.search).get('session');
const headers = { authorization: 'Bearer guest' };
const list = document.querySelector('#messages');
const status = document.querySelector('#status');
const stop = document.querySelector('#stop');

function draw(messages) {
  list.replaceChildren(...messages.filter((m) => m.role !== 'tool').map((m) => {
    const item = document.createElement('li');
    item.dataset.role = m.role;
    item.dataset.status = m.status ?? '';
    item.textContent = m.role + ': ' + (typeof m.content === 'string' ? m.content : '');
    return item;
  }));
}

const seed = await (await fetch('/api/chat/sessions/' + sessionId, { headers })).json();
const connection = createChatConnection({
  target: { url: '/api/chat/stream/' + sessionId, chatUrl: '/api/chat', sessionId, headers },
  seed,
  authorize: false, // the Worker authorizes every request
});
let stopping = null; // the run Stop was pressed for (it may send a chunk or two before it ends)
function show() {
  const { messages, activeRunId } = connection.snapshot();
  draw(messages);
  stop.disabled = !activeRunId || activeRunId === stopping;
}
show();
document.body.dataset.ready = '1';
(async () => {
  for await (const _chunk of connection.subscribe()) show();
})();

stop.addEventListener('click', () => {
  const { activeRunId } = connection.snapshot();
  if (!activeRunId) return;
  stopping = activeRunId;
  stop.disabled = true;
  status.textContent = '';
  connection.stopTurn(activeRunId).catch((error) => {
    status.textContent = error.code ?? String(error);
    stopping = null;
    show();
  });
});

document.querySelector('form').addEventListener('submit', (e) => {
  e.preventDefault();
  const box = e.target.input;
  const input = box.value;
  if (!input.trim()) return;
  box.value = '';
  status.textContent = '';
  connection.send(input).catch((error) => {
    status.textContent = error.code ?? String(error);
    // A refused send (one turn at a time per session) gives back what was typed, to send again.
    if (!box.value) box.value = input;
  });
});
`;

/** GET /: the page of `?session=<id>`, or a redirect to a fresh session. */
export function page(url) {
  if (!url.searchParams.get('session')) {
    return Response.redirect(`${url.origin}/?session=s-${crypto.randomUUID().slice(0, 8)}`, 302);
  }
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>turnkeep on Cloudflare</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><h1>turnkeep on Cloudflare</h1>
<ul id="messages"></ul><p id="status"></p>
<form><input name="input" autocomplete="off" placeholder="Say something, or /words 40"><button>Send</button>
<button type="button" id="stop" disabled>Stop</button></form>
<script type="module">${SCRIPT}</script></body></html>`;
  return new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8' } });
}
