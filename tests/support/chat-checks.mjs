// Assertions on the plain-data results of the scenarios in chat-harness.mjs. The Node tests
// and the Chromium tests run the same scenario and hand its result to the same check here, so
// both runtimes are held to one expectation.
import assert from 'node:assert/strict';

import { assistantText, DIAGNOSTIC, SNAPSHOT } from './chat-harness.mjs';

const NDJSON = 'application/x-ndjson; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

/** `{"error": TurnDiagnostic}` with the pre-stream headers. */
export function checkErrorResponse(actual, { status, code, message, retryable, outcome }) {
  assert.equal(actual.status, status, `status for ${code}`);
  assert.equal(actual.contentType, JSON_TYPE, `content-type for ${code}`);
  assert.equal(actual.cacheControl, 'no-store', `cache-control for ${code}`);
  const error = { version: 1, code, message, retryable };
  if (outcome !== undefined) error.outcome = outcome;
  assert.deepEqual(actual.body, { error });
}

/** Strictly increasing sequences; every one a safe integer. */
export function checkIncreasing(sequences) {
  for (let i = 0; i < sequences.length; i += 1) {
    assert.ok(Number.isSafeInteger(sequences[i]) && sequences[i] >= 0, `sequence ${sequences[i]} is a safe integer`);
    if (i > 0) assert.ok(sequences[i] > sequences[i - 1], `sequence ${sequences[i]} follows ${sequences[i - 1]}`);
  }
}

export function checkHappyPath(r) {
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], NDJSON);
  assert.equal(r.headers['cache-control'], 'no-store');
  assert.equal(r.headers['x-content-type-options'], 'nosniff');
  assert.deepEqual(r.faults, []);
  assert.ok(r.events.length >= 1);
  for (const e of r.events) {
    assert.equal(e.event, SNAPSHOT, 'a clean turn has only snapshots');
    assert.equal(e.sessionId, 'happy');
    assert.equal(e.turnId, 't1');
    assert.deepEqual(e.payload.lineage, { operation: 'submit' });
  }
  checkIncreasing(r.events.map((e) => e.sequence));
  const last = r.events.at(-1).payload;
  assert.equal(last.status, 'complete');
  assert.deepEqual(last.messages.map((m) => m.role), ['user', 'assistant']);
  assert.equal(last.messages[0].content, 'hello there');
  assert.equal(assistantText(last.messages), 'echo: hello there');
  // Usage: prompt tokens = words of the input, completion tokens = chunks (the demo model's rule,
  // `core::chat::demo`).
  assert.equal(last.usage.promptTokens, 2);
  assert.equal(last.usage.completionTokens, 3);
  assert.equal(last.usage.totalTokens, 5);
  assert.equal(last.error, undefined);
  // The final save happened before the stream closed: memory and session are settled.
  assert.deepEqual(r.memory, last.messages);
  assert.equal(r.stored.activeTurn, undefined);
  assert.deepEqual(r.stored.terminalTurns, [{ turnId: 't1', outcome: 'completed' }]);
  assert.equal(r.writes, 2, 'claim and release, nothing per snapshot');
}

export function checkTooLarge(r) {
  const tooLarge = { status: 413, code: 'REQUEST_TOO_LARGE', message: 'Request body is too large.', retryable: false };
  if (r.lengthKept) {
    checkErrorResponse(r.byLength, tooLarge);
    assert.equal(r.byLength.pulls, 0, 'a declared length over the limit is refused without reading');
  }
  checkErrorResponse(r.byCount, tooLarge);
  assert.ok(r.byCount.cancelled, 'the endless body was cancelled');
  assert.ok(r.byCount.pulls <= 6, `an endless body is read only up to the limit (${r.byCount.pulls} pulls of 1 KiB)`);
  assert.equal(r.atLimitStatus, 200, 'a body of exactly maxBodyBytes is accepted');
  checkErrorResponse(r.overByOne, tooLarge);
  assert.ok(r.overByOne.cancelled, 'one byte over: the reader was cancelled');
}

export function checkAbortMidStream(r) {
  assert.equal(r.status, 200);
  assert.deepEqual(r.faults, []);
  assert.equal(r.last.event, DIAGNOSTIC, 'a reader still reading gets a diagnostic as the last line');
  assert.deepEqual(r.last.payload, {
    version: 1,
    code: 'REQUEST_CANCELLED',
    message: 'The chat request was cancelled.',
    retryable: true,
  });
  // The turn stopped early, and what it had so far was saved (after the user's message alone,
  // saved before the answer started).
  assert.equal(r.memorySaves, 2);
  assert.equal(r.memory[0].content, '/words 400');
  const partial = assistantText(r.memory);
  assert.ok(partial.startsWith('w1'), `saved partial answer: ${partial.slice(0, 40)}`);
  assert.ok(partial.length < r.fullText.length, 'the model was stopped before it finished');
  assert.ok(r.fullText.startsWith(partial), 'the saved answer is a prefix of the full one');
  // The lease is free: the next turn on the session runs.
  assert.equal(r.released.activeTurn, null);
  assert.deepEqual(r.released.terminalTurns, [{ turnId: 't1', outcome: 'completed' }]);
  assert.equal(r.nextStatus, 200);
  assert.equal(r.nextLast.payload.status, 'complete');
  assert.equal(assistantText(r.nextLast.payload.messages), 'echo: again');
  // The next turn continued from the saved history.
  assert.deepEqual(r.nextLast.payload.messages.slice(0, 2), r.memory);
}

export function checkSlowReader(r) {
  assert.equal(r.status, 200);
  assert.deepEqual(r.faults, []);
  assert.equal(r.diagnostics, 0);
  checkIncreasing(r.sequences);
  assert.ok(r.snapshots < r.stateChanges, `coalesced: ${r.snapshots} snapshots for ${r.stateChanges} state changes`);
  assert.equal(r.last.event, SNAPSHOT);
  assert.equal(r.last.payload.status, 'complete');
  assert.equal(assistantText(r.last.payload.messages), r.expectedText, 'the last snapshot is the complete answer');
  assert.ok(r.writes <= 3, `storage writes for the turn: ${r.writes}`);
}
