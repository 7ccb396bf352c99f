// A chat client over real HTTP, for the tests that talk to a server by URL (the demo Worker in
// workerd, the example apps): submit bodies, POST /api/chat, and the NDJSON lines of an answer.
import { submitEvent } from './chat-harness.mjs';

let turnCounter = 0;

/** A `client.turn.submit` body (tests/support/chat-harness.mjs's event, stamped now); `turnId` defaults to a fresh one. */
export function submitBody(sessionId, input, turnId = `turn-${process.pid}-${Date.now()}-${++turnCounter}`) {
  return JSON.stringify(submitEvent({ sessionId, turnId, input, extra: { emittedAt: new Date().toISOString() } }));
}

/** POST /api/chat as `tenant` (no Authorization header when tenant is undefined). */
export function postTurn(url, tenant, sessionId, input, init = {}) {
  const headers = { 'content-type': 'application/json' };
  if (tenant !== undefined) headers.authorization = `Bearer ${tenant}`;
  return fetch(`${url}/api/chat`, { method: 'POST', headers, body: submitBody(sessionId, input), ...init });
}

/** The NDJSON lines of a finished response, parsed. */
export async function ndjson(response) {
  const text = await response.text();
  if (!text.endsWith('\n')) throw new Error(`NDJSON body does not end with a newline: ${JSON.stringify(text.slice(-80))}`);
  return text.slice(0, -1).split('\n').map((line) => JSON.parse(line));
}

/** Reads `response`'s body until its text so far matches `pattern`; throws if it ends first. */
export async function readUntil(response, pattern) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!pattern.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before ${pattern} appeared`);
    text += decoder.decode(value, { stream: true });
  }
  return text;
}
