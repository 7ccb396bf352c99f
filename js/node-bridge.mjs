// toNodeHandler(handler): serves a Web-style handler (`Request` in, `Response` out) from
// node:http. What it guarantees, because the chat handler depends on it:
// - the Request carries an AbortSignal that aborts when the client goes away (the socket closes
//   before the response finished), so a turn stops and cleans up instead of running on;
// - the request body is a stream read on demand (nothing is buffered ahead of the handler), and
//   a handler that stops reading early (413) leaves the connection able to send its answer;
// - the response body is pulled only as fast as the client reads (backpressure via 'drain'), and
//   its reader is cancelled when the client leaves, which is how a streamed turn learns of it.
// Only node: built-ins and Web globals (Request, Response, Headers, ReadableStream) are used.

const BODYLESS_METHODS = new Set(['GET', 'HEAD']);
/// Bytes of request body the bridge lets the Web stream hold before pausing the socket.
const REQUEST_BODY_HIGH_WATER_BYTES = 65_536;

/**
 * @param {((request: Request) => Response | Promise<Response>) | { fetch(request: Request): Response | Promise<Response> }} handler
 * @param {{ onError?: (error: unknown) => void }} [options] onError sees handler failures
 *   (default: console.error); the client only ever gets a bare 500.
 * @returns {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void}
 */
export function toNodeHandler(handler, options = {}) {
  const call = handlerFunction(handler);
  const onError = typeof options.onError === 'function' ? options.onError : defaultOnError;
  return (req, res) => {
    serve(call, req, res, onError).catch((error) => {
      onError(error);
      if (!res.headersSent) plain(res, 500, 'internal server error\n');
      else res.destroy();
    });
  };
}

function handlerFunction(handler) {
  if (typeof handler === 'function') return handler;
  if (handler && typeof handler.fetch === 'function') return (request) => handler.fetch(request);
  throw new TypeError('toNodeHandler: handler must be a function (request) => Response, or an object with fetch(request)');
}

function defaultOnError(error) {
  console.error('turnkeep toNodeHandler: the handler failed:', error);
}

async function serve(call, req, res, onError) {
  const gone = clientGone(req, res);
  let request;
  try {
    request = toRequest(req, res, gone.signal);
  } catch {
    req.resume(); // discard the body so the connection can answer
    plain(res, 400, 'bad request\n');
    return;
  }
  let response;
  try {
    response = await call(request);
  } catch (error) {
    onError(error);
    if (!gone.signal.aborted) plain(res, 500, 'internal server error\n');
    return;
  }
  if (!(response instanceof Response)) {
    onError(new TypeError('toNodeHandler: the handler did not return a Response'));
    plain(res, 500, 'internal server error\n');
    return;
  }
  await writeResponse(response, req, res, gone.signal);
}

/// An AbortController that aborts when the client disconnects before the response finished.
function clientGone(req, res) {
  const controller = new AbortController();
  const abort = () => {
    if (!res.writableFinished && !controller.signal.aborted) {
      controller.abort(new DOMException('The client disconnected.', 'AbortError'));
    }
  };
  req.once('aborted', abort);
  res.once('close', abort);
  return controller;
}

function toRequest(req, res, signal) {
  const scheme = req.socket && req.socket.encrypted ? 'https' : 'http';
  const host = req.headers.host || 'localhost';
  const url = new URL(req.url || '/', `${scheme}://${host}`); // throws for a malformed Host
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!raw[i].startsWith(':')) headers.append(raw[i], raw[i + 1]);
  }
  const method = req.method || 'GET';
  const init = { method, headers, signal };
  if (!BODYLESS_METHODS.has(method)) {
    init.body = requestBody(req, res);
    init.duplex = 'half';
  }
  return new Request(url, init);
}

/// The request body as a pull-driven Web stream: the socket is paused whenever the stream holds
/// a high-water mark of bytes, and resumed when the handler reads. Cancelling (a handler that
/// stopped reading) discards the rest instead of destroying the socket, so a 413 still arrives;
/// so does a response that finished while the body was still coming.
function requestBody(req, res) {
  let settled = false;
  res.once('finish', () => {
    settled = true;
    req.resume();
  });
  return new ReadableStream(
    {
      start(controller) {
        req.on('data', (chunk) => {
          if (settled) return;
          controller.enqueue(new Uint8Array(chunk));
          if (controller.desiredSize <= 0) req.pause();
        });
        req.once('end', () => {
          if (!settled) controller.close();
          settled = true;
        });
        req.once('error', (error) => {
          if (!settled) controller.error(error);
          settled = true;
        });
        req.pause();
      },
      pull() {
        req.resume();
      },
      cancel() {
        settled = true;
        req.resume();
      },
    },
    { highWaterMark: REQUEST_BODY_HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
  );
}

async function writeResponse(response, req, res, signal) {
  res.statusCode = response.status;
  if (response.statusText) res.statusMessage = response.statusText;
  copyHeaders(response.headers, res);
  const body = response.body;
  if (!body || req.method === 'HEAD' || signal.aborted) {
    if (body) body.cancel(signal.reason).catch(() => {});
    res.end();
    return;
  }
  res.flushHeaders(); // a streamed answer's headers go out before its first chunk
  const reader = body.getReader();
  const cancel = () => reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || signal.aborted) break;
      if (!res.write(value)) await drained(res, signal);
    }
    if (!signal.aborted) res.end();
  } catch {
    // The body failed after the headers went out: cut the connection so the client sees a
    // truncated response, never a clean end of a broken one.
    res.destroy();
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

function copyHeaders(headers, res) {
  const cookies = typeof headers.getSetCookie === 'function' ? headers.getSetCookie() : [];
  for (const [name, value] of headers) {
    if (name === 'set-cookie') continue;
    res.setHeader(name, value);
  }
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
}

/// Resolves when `res` can take more bytes, or when the client is gone.
function drained(res, signal) {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

function plain(res, status, text) {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
