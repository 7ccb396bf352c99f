// The demo page's script (served as the static asset /demo/page.mjs). The page arrives with the
// conversation already drawn by the server; this makes it live. No rule lives here: the turnkeep
// browser entry (the same wasm the server runs) decides everything, and this file wires it to
// the DOM.
//
// - One `createChatConnection` for the page, continuing from the seed's offset: one live read,
//   shared by every pane (each pane is its own logical reader), on a WebSocket, so the session's
//   stream object hibernates while the page sits idle (the Worker takes the page's tenant cookie
//   on it: a browser sets no `Authorization` on a socket); `?live=sse` reads over SSE instead.
// - Each pane projects what it reads with its own `ChatProjection` and redraws the messages whose
//   markup changed (`projection.renderMessages()`: the server's renderer, renderChatHtml's).
// - Send posts `client.turn.submit`; the turn's own answer (NDJSON snapshots, read through the
//   wasm snapshot cursor) fills the status line, while the conversation comes from the stream,
//   as in every other tab. Stop posts `client.turn.stop` for the running turn, from any tab.
// - A tool call waiting for a person gets an Approve / Reject card in its tool card's
//   `.tool-confirmation` slot, from the confirmations the pane's projection shows (the seed's,
//   then the stream's); a decision posts `client.confirmation.resolve`, and the continuation
//   reaches every tab through the stream.
import { ChatProjection, createChatConnection, createTurnSnapshotCursor } from '/turnkeep/js/client/browser.mjs';

const $ = (id) => document.getElementById(id);
const seed = JSON.parse($('seed').textContent);
const tenant = document.body.dataset.tenant;
const { sessionId } = seed;
// The session and tenant this browser showed last (the server remembers the session in a
// cookie too: `GET /` comes back to it).
localStorage.setItem('turnkeep.session', sessionId);
localStorage.setItem('turnkeep.tenant', tenant);

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
  webSocket: new URLSearchParams(location.search).get('live') !== 'sse',
});
const leaving = new AbortController();
addEventListener('pagehide', () => {
  leaving.abort();
  connection.dispose();
});

// Tool confirmations: records the log shows as final; this tab's decisions in flight.
const FINAL = new Set(['approved', 'rejected', 'expired']);
/** Posts of a decision answered `409 SESSION_BUSY` (a turn runs, or is storing the record). */
const BUSY_ATTEMPTS = 6;
const deciding = new Set(); // tokens this tab is deciding now
const problems = new Map(); // token → the diagnostic its last decision got

const panes = [...document.querySelectorAll('.pane')].map(follow);
showState();

/** One pane: its own reader of the shared connection, its own projection, its own redraws. */
function follow(pane) {
  const list = pane.querySelector('.messages');
  const state = connection.snapshot();
  const projection = new ChatProjection(state.messages, {
    activeRunId: state.activeRunId ?? undefined,
    confirmations: seed.confirmations,
  });
  const shown = new Map(); // message id → the markup now in the DOM
  const view = { list, projection };
  let scheduled = false;
  const draw = () => {
    scheduled = false;
    patch(list, shown, projection.renderMessages());
    fillSlots(view);
    showState();
  };
  fillSlots(view);
  (async () => {
    for await (const chunk of connection.subscribe(leaving.signal)) {
      projection.feed(chunk);
      if (!scheduled) {
        scheduled = true;
        setTimeout(draw, 0); // one redraw per burst of chunks
      }
    }
  })().catch((error) => showDiagnostic(diagnosticOf(error), true));
  return view;
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
      if (el) {
        keepOpened(el, fresh);
        el.replaceWith(fresh);
      }
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

/** A reasoning the reader opened stays open while its message keeps streaming. */
function keepOpened(old, fresh) {
  if (old.querySelector('details.reasoning')?.open) fresh.querySelector('details.reasoning')?.setAttribute('open', '');
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

// ---- Tool confirmations (client.confirmation.resolve) ----


/** Puts a card in every `.tool-confirmation` slot of `view`'s list whose call the log asks about. */
function fillSlots({ list, projection }) {
  const byCall = new Map(projection.confirmations.map((c) => [c.toolCallId, c]));
  for (const slot of list.querySelectorAll('.tool-confirmation')) {
    const record = byCall.get(slot.dataset.toolCallId);
    if (!record) continue; // the server's text stays
    const key = [record.token, record.status, deciding.has(record.token), problems.get(record.token)?.code].join(' ');
    if (slot.dataset.card === key) continue;
    slot.dataset.card = key;
    slot.replaceChildren(FINAL.has(record.status) ? `${record.status}.` : card(record));
  }
}

const refreshCards = () => panes.forEach(fillSlots);

function card(record) {
  const node = el('div', 'confirm-card');
  node.dataset.token = record.token;
  node.dataset.status = record.status;
  const what = el('div', 'what');
  const pending = record.status === 'pending';
  const expired = pending && record.expiresAt !== undefined && record.expiresAt <= Date.now();
  const until = record.expiresAt === undefined ? '' : new Date(record.expiresAt).toLocaleTimeString();
  const when = !pending
    ? `${record.status}…`
    : expired
      ? `expired at ${until} (approving now resolves it as expired)`
      : `waits for your decision${until ? ` until ${until}` : ''}`;
  what.append('The model wants to run ', el('code', '', `${record.action ?? 'a tool'}(${JSON.stringify(record.input)})`), el('div', 'when', when));
  node.append(what);
  if (pending) {
    for (const [decision, label] of [['approve', 'Approve'], ['reject', 'Reject']]) {
      const button = el('button', decision, label);
      button.type = 'button';
      button.disabled = deciding.has(record.token);
      button.onclick = () => decide(record, decision);
      node.append(button);
    }
  }
  const problem = problems.get(record.token);
  if (problem) node.append(el('div', 'problem', `${problem.code}: ${problem.message}`));
  return node;
}

/** The decision, posted again while the session is busy. */
async function postDecision(record, decision) {
  for (let attempt = 1; ; attempt++) {
    const event = {
      protocol: 'agentskit.chat.turn', version: 1, eventId: `evt-${crypto.randomUUID()}`, sessionId,
      // The token names the record; the proposing turn's id is informational, so it stands in.
      turnId: record.token, sequence: 0, emittedAt: new Date().toISOString(),
      event: 'client.confirmation.resolve', payload: { token: record.token, decision },
    };
    const response = await fetch('/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant}` },
      body: JSON.stringify(event),
      signal: leaving.signal,
    });
    if (response.status !== 409 || attempt === BUSY_ATTEMPTS) return response;
    const body = await response.clone().json().catch(() => ({}));
    if (body.error?.code !== 'SESSION_BUSY') return response;
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
  }
}

/**
 * Posts the decision. The request that wins streams the continuation (its snapshots fill the
 * status line; the conversation arrives through the stream, in every tab); any other answer is
 * the record's state, which the stream shows too.
 */
async function decide(record, decision) {
  deciding.add(record.token);
  problems.delete(record.token);
  refreshCards();
  try {
    const response = await postDecision(record, decision);
    const type = response.headers.get('content-type') ?? '';
    if (response.ok && type.startsWith('application/x-ndjson')) {
      const cursor = createTurnSnapshotCursor(sessionId);
      for await (const line of lines(response.body)) if (cursor.apply(line)) showSnapshot(cursor.getSnapshot());
    } else {
      const body = await response.json().catch(() => ({}));
      if (!body.confirmation) problems.set(record.token, body.error ?? { code: `HTTP_${response.status}`, message: 'The decision failed.' });
    }
  } catch (error) {
    if (error.name !== 'AbortError') problems.set(record.token, { code: 'NETWORK', message: `The decision could not be sent: ${error.message}` });
  } finally {
    deciding.delete(record.token);
    refreshCards();
  }
}

/** The lines of an NDJSON body, as text (the snapshot cursor decodes them). */
async function* lines(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      yield buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
    }
  }
  if (buffer.trim() !== '') yield buffer;
}

let sending = false;

/** Whether `input` can be sent now: not empty, and this tab's own turn (one at a time) is over. */
const canSend = (input) => !sending && input.trim() !== '';

async function send(input) {
  if (!canSend(input)) return;
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
  // Enter submits even while Send is disabled: what was typed stays in the box until it can go.
  if (!canSend(input)) return;
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

// Live: the composer works from here on (disabled in the server-rendered page until now).
$('input').disabled = false;
$('send').disabled = false;
$('send').removeAttribute('title');
document.documentElement.dataset.live = 'true';
