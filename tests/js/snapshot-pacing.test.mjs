// The snapshot stream's pacing through the real createChatHandler (core::coalesce decides; the
// contract itself is tested under a fake clock in tests/snapshot_pacing.rs): whatever the host's
// speed, the bytes a reader that keeps up receives stay within the byte budget over the turn's
// time (plus the first line, the first text and the last), the last line always shows the whole
// answer, a slow reader gets the newest state, and the option is checked at construction.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';

import * as pkg from '../../js/node.mjs';
import { assistantText, chatRequest, demoSetup, readTurn, submitEvent, words } from '../support/chat-harness.mjs';

/** `w1 … wN`, one chunk per step; `stepMs` 0: a microtask (as fast as the host). */
const wordsModel = (n, stepMs) => ({
  async *stream() {
    for (let i = 1; i <= n; i++) {
      await (stepMs ? new Promise((resolve) => setTimeout(resolve, stepMs)) : Promise.resolve());
      yield { type: 'text', text: i === 1 ? 'w1' : ` w${i}` };
    }
  },
});

/** One turn read as fast as lines come: each line's length and the turn's duration. */
async function keepUp(handler, sessionId) {
  const started = performance.now();
  const response = await handler(chatRequest(submitEvent({ sessionId, turnId: 't1', input: 'go' })));
  const turn = await readTurn(pkg, response);
  const lengths = turn.text.trimEnd().split('\n').map((line) => Buffer.byteLength(line) + 1);
  return { turn, lengths, ms: performance.now() - started };
}

describe('snapshot pacing', () => {
  for (const [pace, n, stepMs, budget] of [
    ['as fast as the host', 2_000, 0, 65_536],
    ['a chunk every 5 ms', 200, 5, 8_192],
  ]) {
    test(`${pace}: the bytes stay within the budget over the turn, the last line is whole`, async () => {
      const { handler } = demoSetup(pkg, { chat: { model: wordsModel(n, stepMs) }, options: { snapshotBytesPerSecond: budget } });
      const { turn, lengths, ms } = await keepUp(handler, `pace-${stepMs}`);
      assert.deepEqual(turn.faults, []);
      assert.equal(turn.last.payload.status, 'complete');
      assert.equal(assistantText(turn.last.payload.messages), words(n));
      // Lines but the first two (the user's message, the first text: prompt) and the last.
      const paced = lengths.slice(2, -1).reduce((a, b) => a + b, 0);
      const allowed = (budget * ms) / 1000 + Math.max(...lengths);
      assert.ok(paced <= allowed, `${paced} bytes in ${ms.toFixed(0)} ms; budget ${budget} B/s allows ${allowed.toFixed(0)}`);
      const everyChunk = lengths.at(-1) * (n / 2);
      assert.ok(lengths.length < n / 4, `${lengths.length} lines for ${n} chunks`);
      assert.ok(lengths.reduce((a, b) => a + b, 0) < everyChunk / 4, 'far below a line per chunk');
    });
  }

  test('a reader that reads every 30 ms gets the newest state each time, and the last', async () => {
    const { handler } = demoSetup(pkg, { chat: { model: wordsModel(60, 2) } });
    const response = await handler(chatRequest(submitEvent({ sessionId: 'slow', turnId: 't1', input: 'go' })));
    const turn = await readTurn(pkg, response, { delayMs: 30 });
    const shown = turn.snapshots.map((s) => assistantText(s.payload.messages).split(' ').filter(Boolean).length);
    assert.deepEqual(shown, [...shown].sort((a, b) => a - b), 'never older');
    assert.equal(shown.at(-1), 60);
    assert.ok(turn.snapshots.length < 60 / 2, `${turn.snapshots.length} lines`);
  });

  test('snapshotBytesPerSecond must be a positive safe integer', () => {
    for (const bad of [0, -1, 1.5, '100', Number.MAX_SAFE_INTEGER + 1, null]) {
      assert.throws(
        () => demoSetup(pkg, { options: { snapshotBytesPerSecond: bad } }),
        (e) => e.code === 'SERVER_INVALID_CONFIG' && /snapshotBytesPerSecond/.test(e.message),
        String(bad),
      );
    }
    demoSetup(pkg, { options: { snapshotBytesPerSecond: 1 } });
  });
});
