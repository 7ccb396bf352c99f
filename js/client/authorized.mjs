// The connection's `authorize` for the requests its adapters send (toTanStackConnection's and
// TurnkeepChatTransport's posts and reads): the same hook, asked with the Request about to go
// out, so a page or server that gave the connection `authorize` has every request of the
// session checked, whichever wire carries it. A refusal rejects with the connection's
// `SESSION_FORBIDDEN` before anything is sent.

/** Resolves when `connection` lets `url` + `init` go out; rejects with its refusal otherwise. */
export async function authorized(connection, url, init) {
  if (typeof connection.authorizeRequest !== 'function') return; // a connection without the hook
  const base = globalThis.location?.href ?? 'http://localhost/';
  await connection.authorizeRequest(new Request(new URL(url, base), init));
}
