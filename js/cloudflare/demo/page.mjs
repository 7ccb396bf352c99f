// The demo page's script (served as the static asset /demo/page.mjs). The page arrives with the
// conversation already drawn by the server; this makes it live. No rule lives here: the turnkeep
// browser entry (the same wasm the server runs) decides everything, and this file wires it to
// the DOM.
//
// - One `createChatConnection` for the page, continuing from the seed's offset: one SSE read,
//   shared by every pane (each pane is its own logical reader).
// - Each pane projects what it reads with its own `ChatProjection` and redraws the messages whose
//   markup changed (`projection.renderMessages()`: the server's renderer, renderChatHtml's).
// - Send posts `client.turn.submit`; the turn's own answer (NDJSON snapshots, read through the
//   wasm snapshot cursor) fills the status line, while the conversation comes from the stream,
//   as in every other tab. Stop posts `client.turn.stop` for the running turn, from any tab.
import { ChatProjection, createChatConnection } from '/turnkeep/js/browser.mjs';

const $ = (id) => document.getElementById(id);
const seed = JSON.parse($('seed').textContent);
const tenant = document.body.dataset.tenant;
const { sessionId } = seed;

const connection = createChatConnection({
  target: {
    url: `/api/chat/stream/${encodeURIComponent(sessionId)}`,
    chatUrl: '/api/chat',
    sessionId,
    headers: { authorization: `Bearer ${tenant}` },
  },
  initialMessages: seed.messages,
  initialOffset: seed.offset ?? undefined,
  initialRunId: seed.activeRunId ?? undefined,
});
const leaving = new AbortController();
addEventListener('pagehide', () => {
  leaving.abort();
  connection.dispose();
});

for (const pane of document.querySelectorAll('.pane')) follow(pane);
showState();

/** One pane: its own reader of the shared connection, its own projection, its own redraws. */
function follow(pane) {
  const list = pane.querySelector('.messages');
  const state = connection.snapshot();
  const projection = new ChatProjection(state.messages, { activeRunId: state.activeRunId ?? undefined });
  const shown = new Map(); // message id → the markup now in the DOM
  let scheduled = false;
  const draw = () => {
    scheduled = false;
    patch(list, shown, projection.renderMessages());
    showState();
  };
  (async () => {
    for await (const chunk of connection.subscribe(leaving.signal)) {
      projection.feed(chunk);
      if (!scheduled) {
        scheduled = true;
        setTimeout(draw, 0); // one redraw per burst of chunks
      }
    }
  })().catch((error) => showDiagnostic(diagnosticOf(error), true));
}

/** Makes `list` hold `messages` ([{ id, html }]) in order, replacing only what changed. */
function patch(list, shown, messages) {
  const wanted = new Set(messages.map((m) => m.id));
  for (const el of [...list.children]) {
    if (!wanted.has(el.dataset.messageId)) {
      shown.delete(el.dataset.messageId);
      el.remove();
    }
  }
  const byId = new Map([...list.children].map((el) => [el.dataset.messageId, el]));
  let previous = null;
  for (const { id, html } of messages) {
    let el = byId.get(id);
    if (!el || shown.get(id) !== html) {
      const fresh = elementOf(html);
      if (el) el.replaceWith(fresh);
      el = fresh;
      shown.set(id, html);
    }
    const expected = previous ? previous.nextElementSibling : list.firstElementChild;
    if (expected !== el) previous ? previous.after(el) : list.prepend(el);
    previous = el;
  }
  const last = list.lastElementChild;
  if (last && list.closest('.pane')?.dataset.pane === '1') last.scrollIntoView({ block: 'end' });
}

function elementOf(html) {
  const template = document.createElement('template');
  template.innerHTML = html;
  return template.content.firstElementChild;
}

/** The footer and the empty state, from the connection's replay state. */
function showState() {
  const { activeRunId, messages, offset } = connection.snapshot();
  $('empty').hidden = messages.length > 0;
  $('offset').textContent = offset ?? '–';
  $('stop').disabled = !activeRunId;
  if (activeRunId) setStatus('streaming');
  else if ($('status').textContent === 'streaming') setStatus('idle');
}

let sending = false;

async function send(input) {
  if (sending || input.trim() === '') return;
  sending = true;
  $('send').disabled = true;
  clearDiagnostics();
  try {
    const { snapshot } = await connection.send(input, { signal: leaving.signal, onSnapshot: showSnapshot });
    if (snapshot?.payload.error) showDiagnostic(snapshot.payload.error, true);
  } catch (error) {
    if (error.name !== 'AbortError') showDiagnostic(diagnosticOf(error), false);
  } finally {
    sending = false;
    $('send').disabled = false;
    $('input').focus();
  }
}

async function stop() {
  const { activeRunId } = connection.snapshot();
  if (!activeRunId) return;
  $('stop').disabled = true;
  try {
    const answer = await connection.stopTurn(activeRunId);
    const message =
      answer.state === 'stopping'
        ? 'Stopping the answer (in every tab). The partial answer is kept.'
        : 'The turn had ended already.';
    showDiagnostic({ code: 'STOPPED', message, retryable: false }, false);
  } catch (error) {
    showDiagnostic(diagnosticOf(error), false);
  }
}

/** The status line from this tab's own turn (the snapshots of its POST /api/chat answer). */
function showSnapshot(event) {
  const { payload } = event;
  setStatus(payload.status);
  $('sequence').textContent = String(event.sequence);
  const u = payload.usage;
  $('usage').textContent = u ? `${u.promptTokens} in · ${u.completionTokens} out` : '–';
}

function setStatus(status) {
  $('status').textContent = status;
  $('status').className = `pill ${status}`;
}

function diagnosticOf(error) {
  return error.diagnostic ?? { code: 'NETWORK', message: `The request failed: ${error.message}`, retryable: true };
}

function showDiagnostic(diagnostic, fatal) {
  const box = el('div', `diag${fatal ? ' fatal' : ''}`);
  box.setAttribute('role', 'status');
  box.append(el('code', '', diagnostic.code), el('span', '', diagnostic.message));
  const facts = [];
  if (diagnostic.status) facts.push(`HTTP ${diagnostic.status}`);
  if (diagnostic.retryable) facts.push('retryable');
  if (facts.length) box.append(el('span', 'badge', facts.join(' · ')));
  const dismiss = el('button', 'dismiss', '×');
  dismiss.type = 'button';
  dismiss.title = 'Dismiss';
  dismiss.onclick = () => box.remove();
  box.append(dismiss);
  $('diagnostics').append(box);
}

function clearDiagnostics() {
  $('diagnostics').replaceChildren();
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

$('composer').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = $('input').value;
  $('input').value = '';
  send(input);
});
$('input').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    $('composer').requestSubmit();
  }
});
$('stop').addEventListener('click', stop);
$('examples').addEventListener('click', (event) => {
  if (event.target.tagName === 'BUTTON') send(event.target.textContent);
});
// The tenant is a cookie (the server renders the page for it) and the Bearer token of every
// request; another tenant has other sessions, so changing it reloads the page.
$('tenant').addEventListener('change', () => {
  const value = $('tenant').value.trim();
  document.cookie = `turnkeep_tenant=${encodeURIComponent(value)}; path=/; samesite=strict`;
  location.reload();
});

// Live: Send works from here on (it stays disabled in the server-rendered page until now).
$('send').disabled = false;
$('send').removeAttribute('title');
document.documentElement.dataset.live = 'true';
