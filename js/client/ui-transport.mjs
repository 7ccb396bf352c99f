// TurnkeepChatTransport: the AI SDK's `ChatTransport` (ai 7: `useChat({ transport })`,
// `new Chat({ transport })`) over a turnkeep server's UI message stream routes and the page's one
// `createChatConnection`. No rule lives here: the routes decide the turn (createUIMessageChatHandler),
// the wasm decides how log chunks become UI message chunks (UIMessageChunkMapper, the same
// mapping as the server's), and the connection decides how the page's one SSE read is shared.
//
// - sendMessages: POSTs what the stock DefaultChatTransport POSTs to `api` and returns the
//   turn's own UI message stream (its answer).
// - reconnectToStream: no request at all when the connection shows no running turn (null);
//   else the running turn's answer rebuilt from what the page holds, then the log's chunks as the
//   connection reads them — from the page's offset, over its shared SSE, not a replay from the
//   start. `resumeStreamIsReplay` is true: the client rebuilds its message from the first
//   `start`, so nothing is duplicated.
// - stop({ chatId }): POSTs `{api}/{chatId}/stop` (the AI SDK's own `stop()` only disconnects).
// - onRemoteTurn(callback): a turn another tab started; call the chat's `resumeStream()` (after
//   `setMessages(transport.messages())`, so its user message shows) to follow it.
import { UIMessageChunkMapper, UIMessageStreamReader, toUIMessages } from '../../pkg-client/turnkeep.js';
import { authorized } from './authorized.mjs';

export class TurnkeepChatTransport {
  #connection;
  #api;
  #headers;
  #body;
  #fetch;
  #credentials;
  #sending = 0;

  /**
   * `new TurnkeepChatTransport({ connection, api, headers?, body?, credentials?, fetch? })`:
   * `connection` the page's `createChatConnection` of this chat's session, `api` the UI message
   * stream route (`createUIMessageChatHandler` mounted there), `headers` a HeadersInit or a
   * function returning one, sent with every request.
   */
  constructor({ connection, api = '/api/chat', headers, body, credentials, fetch } = {}) {
    if (!connection || typeof connection.subscribe !== 'function' || typeof connection.snapshot !== 'function') {
      throw new TypeError('TurnkeepChatTransport: connection must be a createChatConnection');
    }
    this.#connection = connection;
    this.#api = api;
    this.#headers = headers;
    this.#body = body;
    this.#credentials = credentials;
    this.#fetch = fetch ?? ((...args) => globalThis.fetch(...args));
  }

  /** A resumed stream replays the turn's answer from its `start`: the client starts it afresh. */
  get resumeStreamIsReplay() {
    return true;
  }

  async sendMessages({ chatId, messages, trigger, messageId, abortSignal, headers, body }) {
    const payload = { ...(await resolve(this.#body)), ...body, id: chatId, messages, trigger, messageId };
    const response = await this.#request(this.#api, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...Object.fromEntries(new Headers(headers ?? {})) },
      body: JSON.stringify(payload),
      signal: abortSignal,
    });
    this.#sending += 1;
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        this.#sending -= 1;
      }
    };
    return uiMessageChunks(response.body, finish);
  }

  async reconnectToStream({ chatId: _chatId, abortSignal } = {}) {
    const state = this.#connection.snapshot();
    if (!state.activeRunId) return null;
    const mapper = new UIMessageChunkMapper();
    const rebuilt = mapper.rebuild(state.messages, state.confirmations, state.activeRunId);
    const leaving = new AbortController();
    const unlink = link(abortSignal, leaving);
    const chunks = this.#connection.subscribe(leaving.signal)[Symbol.asyncIterator]();
    const close = () => {
      unlink();
      leaving.abort();
      chunks.return?.();
    };
    return new ReadableStream({
      start(controller) {
        for (const chunk of rebuilt) controller.enqueue(chunk);
      },
      async pull(controller) {
        for (;;) {
          if (mapper.ended) {
            close();
            return controller.close();
          }
          const { value, done } = await chunks.next();
          if (done) {
            close();
            return controller.close();
          }
          const mapped = mapper.feed(value);
          for (const chunk of mapped) controller.enqueue(chunk);
          if (mapped.length > 0 && !mapper.ended) return;
        }
      },
      cancel: close,
    });
  }

  /** Stops whatever turn runs in the chat, from any tab: `{ version, state, turnId? }`. */
  async stop({ chatId, signal } = {}) {
    const response = await this.#request(`${this.#path(chatId)}/stop`, { method: 'POST', signal });
    return (await response.json()).stop;
  }

  /** The conversation the connection holds, as `UIMessage[]` (for `setMessages`). */
  messages() {
    const state = this.#connection.snapshot();
    return toUIMessages(state.messages, state.confirmations);
  }

  /**
   * Calls `callback({ runId })` when a turn starts that this transport did not send (another
   * tab's, another device's). Returns the function that stops listening.
   */
  onRemoteTurn(callback) {
    const leaving = new AbortController();
    (async () => {
      // A run another tab started is reported once its answer starts (the mapper's `start`):
      // by then its user's message is in the connection's projection, which `messages()` gives.
      let run = null; // { runId, mapper } of a run seen starting, not reported yet
      for await (const chunk of this.#connection.subscribe(leaving.signal)) {
        if (chunk?.type === 'RUN_STARTED') {
          run = this.#sending === 0 ? { runId: chunk.runId, mapper: new UIMessageChunkMapper() } : null;
        }
        if (run && run.mapper.feed(chunk).some((ui) => ui.type === 'start')) {
          const { runId, mapper } = run;
          run = null;
          mapper.free?.();
          callback({ runId });
        }
      }
    })().catch(() => {});
    return () => leaving.abort();
  }

  /** `close()`: nothing of its own to release (the connection is the page's). */
  close() {}

  #path(chatId) {
    const url = new URL(this.#api, globalThis.location?.href ?? 'http://localhost/');
    url.pathname = `${url.pathname.replace(/\/$/, '')}/${encodeURIComponent(chatId)}`;
    return this.#api.startsWith('http') ? url.href : url.pathname + url.search;
  }

  async #request(url, init) {
    const headers = new Headers(await resolve(this.#headers));
    for (const [name, value] of new Headers(init.headers ?? {})) headers.set(name, value);
    await authorized(this.#connection, url, { ...init, headers });
    const response = await this.#fetch(url, { ...init, headers, credentials: this.#credentials });
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      const error = new Error(text || `The request failed (${response.status}).`);
      error.statusCode = response.status;
      throw error;
    }
    return response;
  }
}

/** A value, or what a (possibly async) function returns. */
async function resolve(value) {
  return typeof value === 'function' ? value() : value;
}

/** The UI message chunks of a UI message stream body, read by the wasm (the server's framing). */
function uiMessageChunks(body, finished) {
  const reader = body.getReader();
  const parser = new UIMessageStreamReader();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    finished();
    reader.cancel().catch(() => {});
  };
  return new ReadableStream({
    async pull(controller) {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          end();
          return controller.close();
        }
        const read = parser.push(value);
        for (const chunk of read.chunks) controller.enqueue(chunk);
        if (read.done) {
          end();
          return controller.close();
        }
        if (read.chunks.length > 0) return;
      }
    },
    cancel: end,
  });
}

/** Aborts `controller` when `signal` does; returns the function that unlinks them. */
function link(signal, controller) {
  if (!signal) return () => {};
  if (signal.aborted) {
    controller.abort(signal.reason);
    return () => {};
  }
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}
