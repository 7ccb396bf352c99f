// The SessionLog conformance suite (js/testing/session-log-conformance.mjs) against every log
// turnkeep ships: in memory, store-backed over a small JS item store, and the Durable Streams log
// over HTTP against the demo Worker in workerd (STREAMS_PUBLIC=1) and against the reference
// server (@durable-streams/server, in this process). And it catches what it should: a log that
// ignores producer stamps fails every fencing case.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { createDurableStreamsLog, createMemorySessionLog, createStoreSessionLog } from '../../js/node.mjs';
import { CASES, checkSessionLog } from '../../js/testing/session-log-conformance.mjs';
import { startStreamServers } from '../support/stream-servers.mjs';

const ALL = Object.values(CASES);
const FENCING = [CASES.staleEpoch, CASES.replayedSeq, CASES.racingReplays, CASES.newEpoch, CASES.sequenceGap];

function assertConformant(report) {
  assert.deepEqual(report.failed, [], report.failed.map((f) => `${f.name}: ${f.detail}`).join('\n'));
  assert.deepEqual(report.passed, ALL);
}

/**
 * The item store a Redis or Postgres adapter would implement, over arrays: `commit` compares the
 * head's version and writes items and head in one synchronous step (atomic on one event loop).
 */
function arrayItemStore() {
  let head = null;
  const items = [];
  return {
    async head() {
      return head;
    },
    async commit(expectedVersion, newItems, nextHead) {
      await Promise.resolve(); // a round trip: racing commits interleave here
      const version = head === null ? null : JSON.parse(head).version;
      if (version !== expectedVersion) return false;
      items.push(...newItems);
      head = nextHead;
      return true;
    },
    async items(from, limit) {
      return items.slice(from, from + limit);
    },
  };
}

/** A log that drops every producer stamp: order and reads are right, fencing is not. */
function stampIgnoringLog() {
  const inner = createMemorySessionLog();
  return {
    append: (chunks, { signal } = {}) => inner.append(chunks, { signal }),
    read: (options) => inner.read(options),
  };
}

let servers;

before(async () => {
  servers = await startStreamServers('log-conformance');
});

after(async () => {
  await servers?.stop();
});

let streams = 0;
const streamUrl = (base) => `${base}/v1/stream/conformance-${process.pid}-${++streams}`;

test('createMemorySessionLog is conformant', async () => {
  assertConformant(await checkSessionLog(() => createMemorySessionLog()));
});

test('createStoreSessionLog over a JS item store is conformant', async () => {
  assertConformant(await checkSessionLog(() => createStoreSessionLog({ store: arrayItemStore() })));
});

test('createDurableStreamsLog against the demo Worker in workerd is conformant', async () => {
  assertConformant(await checkSessionLog(() => createDurableStreamsLog({ url: streamUrl(servers.workerUrl) })));
});

test('createDurableStreamsLog against the reference Durable Streams server is conformant', async () => {
  assertConformant(await checkSessionLog(() => createDurableStreamsLog({ url: streamUrl(servers.referenceUrl) })));
});

test('the suite fails a log that ignores producer stamps, on every fencing case and no other', async () => {
  const report = await checkSessionLog(() => stampIgnoringLog());
  assert.deepEqual(report.failed.map((f) => f.name).sort(), [...FENCING].sort());
  assert.deepEqual(report.passed.sort(), ALL.filter((name) => !FENCING.includes(name)).sort());
});
