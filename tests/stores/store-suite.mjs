// The tests every durable store adapter must pass, registered once per adapter file against the
// real server that file started: session storage, chat memory and the session log, so every
// database gets them alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { createStoreSessionLog } from '../../js/node.mjs';
import { CASES as LOG_CASES, checkSessionLog } from '../../js/testing/session-log-conformance.mjs';
import { CASES as MEMORY_CASES, checkChatMemory } from '../../js/testing/chat-memory-conformance.mjs';
import { CASES, checkSessionStorage } from '../../js/testing/session-storage-conformance.mjs';
import { checkConcurrentWriters, checkThenAct, checkWholeReads, conversation, RACE_CASES, WRITE_CASES } from './store-checks.mjs';

/**
 * @param {object} adapter
 * @param {() => { url: string }} adapter.server the running server (read when a test runs)
 * @param {Record<string, (url: string) => Promise<{ client: unknown, close(): Promise<unknown> }>>} adapter.clients
 *   the client libraries to run every case through; the first two also serve as writer and
 *   reader on two connections
 * @param {(client, namespace: string) => object} adapter.sessionStorage the adapter's storage in
 *   a namespace (prefix, scope) no other test uses
 * @param {(client, namespace: string, sessionId: string) => object} adapter.chatMemory
 * @param {(client, namespace: string) => object} adapter.lastWriteWins the same storage with its
 *   compare-and-set replaced by an unconditional write
 * @param {(client, namespace: string, sessionId: string) => { save(messages): Promise<void> }} adapter.splitWriter
 *   a chat memory writer that saves in several commands (what the adapter must not do)
 * @param {(client, namespace: string, sessionId: string) => object} adapter.sessionLog the
 *   adapter's session log (createRedisSessionLog, createPostgresSessionLog)
 * @param {(client, namespace: string, sessionId: string) => object} adapter.uncheckedLogStore
 *   the log's item store with the version check taken out of its commit
 */
/** Log objects sharing one log in the races below, as that many processes would. */
const PROCESSES = 4;

/** One log reached through several log objects: appends take turns among them, reads use the first. */
function sharedLog(logs) {
  let next = 0;
  return {
    append: (chunks, options) => logs[next++ % logs.length].append(chunks, options),
    read: (options) => logs[0].read(options),
  };
}

export function storeSuite(adapter) {
  const kinds = Object.keys(adapter.clients);
  const [writerKind, readerKind] = kinds;
  let namespaces = 0;
  const fresh = (label) => `t${++namespaces}-${label.replace(/[^a-z0-9]/gi, '')}:`;
  const open = async (t, kind = writerKind) => {
    const { client, close } = await adapter.clients[kind](adapter.server().url);
    t.after(close);
    return client;
  };

  for (const kind of kinds) {
    test(`${kind}: session storage passes the conformance suite (32 racing saves, one winner)`, async (t) => {
      const client = await open(t, kind);
      const report = await checkSessionStorage(() => adapter.sessionStorage(client, fresh(kind)));
      assert.deepEqual(report.failed, []);
      assert.deepEqual(report.passed, Object.values(CASES));
    });

    test(`${kind}: chat memory keeps one session's messages, replaced whole by each save`, async (t) => {
      const client = await open(t, kind);
      const namespace = fresh(kind);
      const memory = adapter.chatMemory(client, namespace, 's1');
      const other = adapter.chatMemory(client, namespace, 's2');
      assert.deepEqual(await memory.load(), [], 'a session never saved has no messages');
      const long = conversation('long', 1_200); // more rows than one Redis RPUSH call takes
      await memory.save(long, {});
      assert.deepEqual(await memory.load({}), long);
      const short = conversation('short', 2);
      await memory.save(short);
      assert.deepEqual(await memory.load(), short, 'a shorter save leaves no rows of the longer one');
      assert.deepEqual(await other.load(), [], 'sessions do not share messages');
      await memory.save([]);
      assert.deepEqual(await memory.load(), []);
    });

    test(`${kind}: chat memory passes the ChatMemory conformance suite (memory fences)`, async (t) => {
      const client = await open(t, kind);
      const namespace = fresh(kind);
      let sessions = 0;
      const report = await checkChatMemory(() => adapter.chatMemory(client, namespace, `fence-${sessions++}`));
      assert.deepEqual(report.failed, []);
      assert.deepEqual(report.passed, Object.values(MEMORY_CASES));
    });

    test(`${kind}: the session log passes the SessionLog conformance suite`, async (t) => {
      const client = await open(t, kind);
      const report = await checkSessionLog(() => adapter.sessionLog(client, fresh(kind), 's'));
      assert.deepEqual(report.failed, [], report.failed.map((f) => `${f.name}: ${f.detail}`).join('\n'));
      assert.deepEqual(report.passed, Object.values(LOG_CASES));
    });
  }

  // One log object runs its appends one at a time, so the races that matter are between log
  // objects: other processes, or a zombie turn and its successor. These run the suite through
  // PROCESSES log objects on two connections sharing one log.
  test(`the session log reached through ${PROCESSES} log objects on two connections passes the SessionLog conformance suite`, async (t) => {
    const clients = [await open(t, writerKind), await open(t, readerKind)];
    const report = await checkSessionLog(() => {
      const namespace = fresh('shared');
      return sharedLog(Array.from({ length: PROCESSES }, (_, i) => adapter.sessionLog(clients[i % 2], namespace, 's')));
    });
    assert.deepEqual(report.failed, [], report.failed.map((f) => `${f.name}: ${f.detail}`).join('\n'));
    assert.deepEqual(report.passed, Object.values(LOG_CASES));
  });

  test(`a log store whose commit skips the version check fails the SessionLog conformance suite (${PROCESSES} log objects)`, async (t) => {
    const clients = [await open(t, writerKind), await open(t, readerKind)];
    const report = await checkSessionLog(() => {
      const namespace = fresh('unchecked');
      const stores = Array.from({ length: PROCESSES }, (_, i) => adapter.uncheckedLogStore(clients[i % 2], namespace, 's'));
      return sharedLog(stores.map((store) => createStoreSessionLog({ store })));
    });
    // Racing copies are stored more than once (or hit a duplicate key); appends that take turns
    // among the objects write on heads another object has moved, so offsets go wrong as well.
    const failed = report.failed.map((f) => f.name);
    assert.ok(failed.includes(LOG_CASES.racingReplays), `failed: ${failed.join('; ')}`);
    assert.ok(failed.includes(LOG_CASES.offsetsIncrease), `failed: ${failed.join('; ')}`);
  });

  test(`writers on two connections (${writerKind}, ${readerKind}) append at once: every batch stored once, whole, each writer's in order`, async (t) => {
    const namespace = fresh('writers');
    const logs = [adapter.sessionLog(await open(t, writerKind), namespace, 's'), adapter.sessionLog(await open(t, readerKind), namespace, 's')];
    const chunks = await checkConcurrentWriters(logs, { writers: 8, batches: 6 });
    assert.equal(chunks, 8 * 6 * 2);
  });

  test('the last-write-wins variant on the same server fails the conformance suite', async (t) => {
    const client = await open(t);
    const report = await checkSessionStorage(() => adapter.lastWriteWins(client, fresh('lww')));
    assert.deepEqual(report.failed.map((f) => f.name), WRITE_CASES);
    assert.match(report.failed.at(-1).detail, /32 of 32 savers won/);
  });

  test('read-then-write over two round trips fails the races on the same server', async (t) => {
    const client = await open(t);
    const report = await checkSessionStorage(() => {
      const namespace = fresh('cta');
      return checkThenAct(adapter.sessionStorage(client, namespace), adapter.lastWriteWins(client, namespace));
    });
    assert.deepEqual(report.failed.map((f) => f.name), RACE_CASES);
    assert.match(report.failed.at(-1).detail, /\d+ of 32 savers won/);
  });

  test(`a reader (${readerKind}) sees a whole conversation, never part of a save by a writer (${writerKind})`, async (t) => {
    const namespace = fresh('atomic');
    const writer = adapter.chatMemory(await open(t, writerKind), namespace, 's');
    const reader = adapter.chatMemory(await open(t, readerKind), namespace, 's');
    const loads = await checkWholeReads(writer, reader, [conversation('a', 400), conversation('b', 3), conversation('c', 150)], 30);
    assert.ok(loads > 0, 'the reader loaded while the writer saved');
  });

  test('the whole-read check catches a save written in several commands', async (t) => {
    const namespace = fresh('split');
    const writer = adapter.splitWriter(await open(t, writerKind), namespace, 's');
    const reader = adapter.chatMemory(await open(t, readerKind), namespace, 's');
    await assert.rejects(checkWholeReads(writer, reader, [conversation('a', 200), conversation('b', 3)], 6), /no saved version|Expected values/);
  });
}
