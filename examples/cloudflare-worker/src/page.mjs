// The example's one page: a session's conversation so far (GET /api/chat/sessions/:id, the
// session log's projection) and a form that sends a turn (POST /api/chat) and draws each
// snapshot of the answer as it streams. No build step, no framework; the user is `guest`.
// A page that should follow a turn another tab started, or resume one after a reload, reads
// `GET /api/chat/stream/:id` with turnkeep/client's createChatConnection instead.

const SCRIPT = `
const sessionId = new URLSearchParams(location.search).get('session');
const auth = { authorization: 'Bearer guest' };
const list = document.querySelector('#messages');
function draw(messages) {
  list.replaceChildren(...messages.filter((m) => m.role !== 'tool').map((m) => {
    const item = document.createElement('li');
    item.dataset.role = m.role;
    item.textContent = m.role + ': ' + (typeof m.content === 'string' ? m.content : '');
    return item;
  }));
}
async function load() {
  const response = await fetch('/api/chat/sessions/' + sessionId, { headers: auth });
  if (response.ok) draw((await response.json()).messages);
}
let n = 0;
async function send(input) {
  const turnId = 'turn-' + Date.now() + '-' + (++n);
  const event = { protocol: 'agentskit.chat.turn', version: 1, eventId: 'e-' + turnId, sessionId, turnId,
    sequence: 0, emittedAt: new Date().toISOString(), event: 'client.turn.submit', payload: { input } };
  const response = await fetch('/api/chat', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(event) });
  if (!response.ok) { document.querySelector('#status').textContent = (await response.json()).error?.code ?? response.status; return; }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let rest = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const lines = (rest + value).split('\\n');
    rest = lines.pop();
    for (const line of lines) {
      const frame = JSON.parse(line);
      if (frame.event === 'server.turn.snapshot') draw(frame.payload.messages);
    }
  }
}
document.querySelector('form').addEventListener('submit', (e) => {
  e.preventDefault();
  const input = e.target.input.value;
  e.target.input.value = '';
  send(input);
});
load();
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
<form><input name="input" autocomplete="off" placeholder="Say something, or /words 40"><button>Send</button></form>
<script type="module">${SCRIPT}</script></body></html>`;
  return new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8' } });
}
