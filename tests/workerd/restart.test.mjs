// Persistence across a restart of the local runtime: `wrangler dev --persist-to DIR` (what
// `npm start` runs) is stopped and started again on the same directory. History, cursor and
// terminal turns survive; a finished turn is still refused as a replay; the next turn continues
// the conversation with a higher snapshot sequence.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';

import { getSession, ndjson, postTurn, removeDir, submitBody, tempDir } from './harness.mjs';
import { startWranglerDev } from '../support/wrangler-dev.mjs';

const state = tempDir('turnkeep-restart-');
after(() => removeDir(state));

const lastSnapshot = (lines) => lines.filter((l) => l.event === 'server.turn.snapshot').at(-1);

test('history, cursor and terminal turns survive a restart of wrangler dev; the next turn continues', async () => {
  const tenant = 'restart-tenant';
  const sessionId = 'restart-s';
  let dev = await startWranglerDev({ persistDir: state });
  let before;
  let firstTurnBody;
  let lastSequence;
  try {
    firstTurnBody = submitBody(sessionId, 'first');
    const first = await fetch(`${dev.url}/api/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant}`, 'content-type': 'application/json' },
      body: firstTurnBody,
    });
    assert.equal(first.status, 200);
    await ndjson(first);
    const second = await postTurn(dev.url, tenant, sessionId, '/tool cats');
    lastSequence = lastSnapshot(await ndjson(second)).sequence;
    before = await getSession(dev.url, tenant, sessionId);
    // user, echo answer, user, the answer calling the tool, the tool result, the final answer
    assert.deepEqual(before.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
  } finally {
    await dev.stop();
  }

  dev = await startWranglerDev({ persistDir: state });
  try {
    const after = await getSession(dev.url, tenant, sessionId);
    assert.deepEqual(after, before);
    assert.equal(after.session.activeTurn, null);
    assert.deepEqual(after.session.terminalTurns.map((t) => t.outcome), ['completed', 'completed']);

    // The first turn's id is still known: sending it again is refused, the model is not re-run.
    const replay = await fetch(`${dev.url}/api/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant}`, 'content-type': 'application/json' },
      body: firstTurnBody,
    });
    assert.equal(replay.status, 409);
    await replay.text();

    const next = await postTurn(dev.url, tenant, sessionId, 'third');
    assert.equal(next.status, 200);
    const lines = await ndjson(next);
    const snapshots = lines.filter((l) => l.event === 'server.turn.snapshot');
    assert.ok(snapshots[0].sequence > lastSequence, `sequence ${snapshots[0].sequence} after ${lastSequence}`);
    const messages = lastSnapshot(lines).payload.messages;
    assert.deepEqual(messages.slice(0, before.messages.length), before.messages);
    assert.equal(messages.at(-1).content, 'echo: third');
    const final = await getSession(dev.url, tenant, sessionId);
    assert.ok(final.session.cursor > before.session.cursor);
    assert.equal(final.session.terminalTurns.length, 3);
  } finally {
    await dev.stop();
  }
});
