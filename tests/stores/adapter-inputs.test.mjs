// What the adapters do with bad options, bad arguments and a client that misbehaves: a clear
// error (SERVER_INVALID_CONFIG at creation, a named Error per call), never a guessed answer.
// The clients here implement the documented minimal interfaces (`eval(script, keys, args)`,
// `query(text, params)`) and answer what each case needs; the real servers are in the other files.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  createPostgresChatMemory,
  createPostgresSessionLog,
  createPostgresSessionLogStore,
  createPostgresSessionStorage,
  migratePostgres,
} from '../../js/postgres.mjs';
import { createRedisChatMemory, createRedisSessionLog, createRedisSessionLogStore, createRedisSessionStorage } from '../../js/redis.mjs';
import { readFileSync } from 'node:fs';

import {
  STORE_KEY_PART_CHARS_MAX,
  STORE_LOG_COMMIT_JSON_BYTES_MAX,
  STORE_MESSAGES_JSON_BYTES_MAX,
  STORE_SESSION_JSON_BYTES_MAX,
  utf8Bytes,
} from '../../js/stores/common.mjs';
import { PUSH_VALUES_MAX } from '../../js/stores/redis/chat-memory.mjs';
import { conformanceSnapshot } from '../../js/testing/session-storage-conformance.mjs';

/** A minimal eval client answering `reply` (or throwing it when it is an Error); records calls. */
function evalClient(reply) {
  const calls = [];
  return {
    calls,
    async eval(script, keys, args) {
      calls.push({ script, keys, args });
      if (reply instanceof Error) throw reply;
      return reply;
    },
  };
}

function queryClient(rows) {
  const calls = [];
  return {
    calls,
    async query(text, params) {
      calls.push({ text, params });
      if (rows instanceof Error) throw rows;
      return { rows };
    },
  };
}

const redis = evalClient(1);
const sql = queryClient([]);

/** [what, call, expected code or message pattern] */
const CONFIG_CASES = [
  ['redis: no options', () => createRedisSessionStorage(), /createRedisSessionStorage: options must be an object/],
  ['redis: unknown client', () => createRedisSessionStorage({ client: {} }), /client must be a node-redis client, an ioredis client, or an object with eval/],
  ['redis: prefix with a brace', () => createRedisSessionStorage({ client: redis, prefix: 'a{b' }), /prefix must not contain \{ or \}/],
  ['redis: prefix not a string', () => createRedisSessionStorage({ client: redis, prefix: 5 }), /prefix must be a string of at most 256/],
  ['redis: memory without a session', () => createRedisChatMemory({ client: redis }), /sessionId must be a non-empty string/],
  ['postgres: unknown client', () => createPostgresSessionStorage({ client: { run() {} } }), /client must be a pg Pool or Client, a postgres.js sql/],
  ['postgres: scope too long', () => createPostgresSessionStorage({ client: sql, scope: 'x'.repeat(257) }), /scope must be a string of at most 256/],
  ['postgres: memory without a session', () => createPostgresChatMemory({ client: sql, sessionId: '' }), /sessionId must be a non-empty string/],
  ['redis: log without a session', () => createRedisSessionLog({ client: redis }), /createRedisSessionLogStore: sessionId must be a non-empty string/],
  ['redis: log store, unknown client', () => createRedisSessionLogStore({ client: { query() {} }, sessionId: 's' }), /client must be a node-redis client/],
  ['postgres: log without a session', () => createPostgresSessionLog({ client: sql, sessionId: 7 }), /createPostgresSessionLogStore: sessionId must be a non-empty string/],
  ['postgres: log store, scope not a string', () => createPostgresSessionLogStore({ client: sql, sessionId: 's', scope: {} }), /scope must be a string/],
];

for (const [what, call, message] of CONFIG_CASES) {
  test(`creation fails clearly: ${what}`, () => {
    assert.throws(call, (error) => {
      assert.match(error.message, message);
      assert.equal(error.code, 'SERVER_INVALID_CONFIG');
      return true;
    });
  });
}

const STORAGES = {
  redis: (reply) => {
    const client = evalClient(reply);
    return { client, storage: createRedisSessionStorage({ client }) };
  },
  postgres: (rows) => {
    const client = queryClient(rows);
    return { client, storage: createPostgresSessionStorage({ client }) };
  },
};

for (const [name, make] of Object.entries(STORAGES)) {
  const ok = name === 'redis' ? 1 : [{ cursor: '1' }];
  const snapshot = conformanceSnapshot('s1', 1, 't');

  test(`${name}: a save with a bad snapshot or cursor is refused before anything is sent`, async () => {
    const { client, storage } = make(ok);
    await assert.rejects(storage.save({ ...snapshot, cursor: -1 }, undefined), /cursor must be a non-negative safe integer/);
    await assert.rejects(storage.save({ ...snapshot, sessionId: undefined }, undefined), /sessionId must be a non-empty string/);
    await assert.rejects(storage.save('{not json', undefined), /a text snapshot must be JSON/);
    await assert.rejects(storage.save(snapshot, 1.5), /expectedCursor must be undefined or a non-negative safe integer/);
    await assert.rejects(storage.load(42), /sessionId must be a non-empty string/);
    assert.equal(client.calls.length, 0);
  });

  test(`${name}: an aborted signal stops the call before it is sent`, async () => {
    const { client, storage } = make(ok);
    const signal = AbortSignal.abort();
    await assert.rejects(storage.save(snapshot, undefined, signal), { name: 'AbortError' });
    await assert.rejects(storage.load('s1', signal), { name: 'AbortError' });
    assert.equal(client.calls.length, 0);
  });

  test(`${name}: a failing client becomes an error naming the store, with the cause kept`, async () => {
    const cause = new Error('connection reset');
    const { storage } = make(cause);
    await assert.rejects(storage.save(snapshot, undefined), (error) => {
      assert.equal(error.message, `turnkeep/${name} sessionStorage.save: connection reset`);
      assert.equal(error.cause, cause);
      return true;
    });
  });

  test(`${name}: a text snapshot is stored verbatim, with its cursor read from it`, async () => {
    const { client, storage } = make(ok);
    const text = JSON.stringify(snapshot);
    assert.equal(await storage.save(text, undefined), true);
    const sent = name === 'redis' ? client.calls[0].args : client.calls[0].params;
    assert.ok(sent.includes(text), 'the text is sent as is');
    assert.ok(sent.includes('1'), 'the cursor travels as decimal text');
  });
}

test('redis: a script reply other than 0 or 1 is an error, never a guess', async () => {
  for (const reply of ['yes', null, 2, 'Aborted']) {
    const storage = createRedisSessionStorage({ client: evalClient(reply) });
    await assert.rejects(storage.save(conformanceSnapshot('s1', 1, 't'), undefined), /expected 0 or 1/);
  }
});

test('redis: a stored row that is not JSON fails the load, naming its position', async () => {
  const memory = createRedisChatMemory({ client: evalClient(['{"id":"m0"}', '{broken']), sessionId: 's1' });
  await assert.rejects(memory.load(), /the stored message at position 1 is not JSON/);
  const notList = createRedisChatMemory({ client: evalClient('text'), sessionId: 's1' });
  await assert.rejects(notList.load(), /expected a list/);
});

test('postgres: a conversation missing rows fails the load instead of reading short', async () => {
  const rows = [{ message_count: 3, position: 0, message: '{"id":"m0"}' }, { message_count: 3, position: 2, message: '{"id":"m2"}' }];
  const memory = createPostgresChatMemory({ client: queryClient(rows), sessionId: 's1' });
  await assert.rejects(memory.load(), /lists 3 messages but 2 rows were found/);
});

test('postgres: a save the database did not count whole is an error', async () => {
  const memory = createPostgresChatMemory({ client: queryClient([{ message_count: 1 }]), sessionId: 's1' });
  await assert.rejects(memory.save([{ id: 'a' }, { id: 'b' }]), /wrote 1 messages, expected 2/);
});

test('a malformed memory fence is a TypeError before anything is sent; a refused fenced save is an error naming it', async () => {
  const redis = evalClient(-1);
  const postgres = queryClient([]);
  for (const memory of [createRedisChatMemory({ client: redis, sessionId: 's1' }), createPostgresChatMemory({ client: postgres, sessionId: 's1' })]) {
    for (const fence of ['9', -1, 1.5, 2 ** 53, {}]) {
      await assert.rejects(memory.save([{ id: 'a' }], { fence }), (e) => e instanceof TypeError && /fence must be a non-negative safe integer/.test(e.message));
    }
  }
  assert.equal(redis.calls.length + postgres.calls.length, 0);
  // What each store answers a save a higher fence saved before: -1 from the script, no row.
  await assert.rejects(createRedisChatMemory({ client: redis, sessionId: 's1' }).save([{ id: 'a' }], { fence: 3 }), /refused, a newer turn saved this conversation \(this save's fence is 3\)/);
  assert.deepEqual(redis.calls[0].args, ['3', '{"id":"a"}']);
  await assert.rejects(createPostgresChatMemory({ client: postgres, sessionId: 's1' }).save([{ id: 'a' }], { fence: 3 }), /refused, a newer turn saved this conversation/);
  assert.equal(postgres.calls[0].params[3], '3');
});

test('postgres: migratePostgres names the store when the client fails', async () => {
  await assert.rejects(migratePostgres(queryClient(new Error('permission denied for schema public'))), /turnkeep\/postgres migrate: permission denied/);
});

test('the stores\' bounds are the ones named in src/core/limits.rs', () => {
  const limits = readFileSync(new URL('../../src/core/limits.rs', import.meta.url), 'utf8');
  const named = (name) => Number(new RegExp(`pub const ${name}: usize = ([\\d_]+);`).exec(limits)?.[1].replaceAll('_', ''));
  assert.equal(STORE_SESSION_JSON_BYTES_MAX, named('STORE_SESSION_JSON_BYTES_MAX'));
  assert.equal(STORE_MESSAGES_JSON_BYTES_MAX, named('STORE_MESSAGES_JSON_BYTES_MAX'));
  assert.equal(STORE_KEY_PART_CHARS_MAX, named('STORE_KEY_PART_CHARS_MAX'));
  assert.equal(PUSH_VALUES_MAX, named('REDIS_SCRIPT_PUSH_VALUES_MAX'));
  assert.equal(STORE_LOG_COMMIT_JSON_BYTES_MAX, named('STORE_LOG_COMMIT_JSON_BYTES_MAX'));
});

test('UTF-8 lengths are counted exactly', () => {
  for (const text of ['', 'ascii', 'é', '€', '😀', 'a😀é€\u007f\u0080\u07ff\u0800\uffff', '"\\\n']) {
    assert.equal(utf8Bytes(text), Buffer.byteLength(text, 'utf8'), JSON.stringify(text));
  }
});

test('a save over a bound is refused before anything is sent', async () => {
  const client = evalClient(1);
  const storage = createRedisSessionStorage({ client });
  const big = { ...conformanceSnapshot('s1', 1, 't'), padding: 'x'.repeat(STORE_SESSION_JSON_BYTES_MAX) };
  await assert.rejects(storage.save(big, undefined), /the session envelope take \d+ bytes of JSON, more than the 16777216/);
  const memory = createPostgresChatMemory({ client: queryClient([]), sessionId: 's1' });
  const half = 'é'.repeat(STORE_MESSAGES_JSON_BYTES_MAX / 4); // 2 bytes each: two of these are just over
  await assert.rejects(memory.save([{ content: half }, { content: half }]), /the messages take \d+ bytes of JSON, more than the 33554432/);
  assert.equal(client.calls.length, 0);
});

// ---- The session-log item stores (head / commit / items), called as src/web/adapters/log_store.rs does.

const LOG_STORES = {
  redis: (reply) => {
    const client = evalClient(reply);
    return { client, store: createRedisSessionLogStore({ client, sessionId: 's1' }), sent: () => client.calls.map((c) => c.args) };
  },
  postgres: (rows) => {
    const client = queryClient(rows);
    return { client, store: createPostgresSessionLogStore({ client, sessionId: 's1' }), sent: () => client.calls.map((c) => c.params) };
  },
};
const HEAD = JSON.stringify({ version: 3, length: 5, producers: { p: [0, 2] } });

for (const [name, make] of Object.entries(LOG_STORES)) {
  const ok = name === 'redis' ? 1 : [{ committed: '1', written: '2' }];

  test(`${name} log store: a commit with bad arguments is refused before anything is sent`, async () => {
    const { client, store } = make(ok);
    const CASES = [
      [[-1, ['{}'], HEAD], /expectedVersion must be null or a non-negative safe integer/],
      [[2, '{}', HEAD], /items must be an array of JSON texts/],
      [[2, [{}], HEAD], /items must be an array of JSON texts/],
      [[2, ['{}'], '{not json'], /head must be the JSON text of a log head/],
      [[2, ['{}'], JSON.stringify({ version: 3 })], /head must be the JSON text of a log head/],
      [[2, ['{}', '{}'], JSON.stringify({ version: 3, length: 1 })], /a length of at least the items/],
      [[2, ['{}'], { version: 3, length: 5 }], /head must be the JSON text/],
    ];
    for (const [args, message] of CASES) await assert.rejects(store.commit(...args), message, JSON.stringify(args));
    await assert.rejects(store.items(-1, 10), /from and limit must be non-negative safe integers/);
    await assert.rejects(store.items(0, 1.5), /from and limit must be non-negative safe integers/);
    assert.deepEqual(await store.items(4, 0), [], 'nothing asked, nothing sent');
    assert.equal(client.calls.length, 0);
  });

  test(`${name} log store: the version and the head's count travel as decimal text, the head verbatim`, async () => {
    const { store, sent } = make(ok);
    assert.equal(await store.commit(2, ['{"a":1}', '{"b":2}'], HEAD), true);
    assert.equal(await store.commit(null, ['{"a":1}', '{"b":2}'], HEAD), true);
    const [update, create] = sent();
    if (name === 'redis') {
      assert.deepEqual(update, ['2', '3', HEAD, '3', '{"a":1}', '{"b":2}']);
      assert.deepEqual(create.slice(0, 4), ['', '3', HEAD, '3']);
    } else {
      assert.deepEqual(update, ['', 's1', '3', '5', HEAD, ['{"a":1}', '{"b":2}'], '2']);
      assert.deepEqual(create, ['', 's1', '3', '5', HEAD, ['{"a":1}', '{"b":2}']]);
    }
  });

  test(`${name} log store: an aborted signal stops every call before it is sent`, async () => {
    const { client, store } = make(ok);
    const signal = AbortSignal.abort();
    await assert.rejects(store.head({ signal }), { name: 'AbortError' });
    await assert.rejects(store.commit(2, ['{}'], HEAD, { signal }), { name: 'AbortError' });
    await assert.rejects(store.items(0, 10, { signal }), { name: 'AbortError' });
    assert.equal(client.calls.length, 0);
  });

  test(`${name} log store: a failing client becomes an error naming the store, with the cause kept`, async () => {
    const cause = new Error('connection reset');
    const { store } = make(cause);
    for (const [method, call] of [['head', () => store.head()], ['commit', () => store.commit(2, ['{}'], HEAD)], ['items', () => store.items(0, 5)]]) {
      await assert.rejects(call(), (error) => {
        assert.equal(error.message, `turnkeep/${name} sessionLog.${method}: connection reset`);
        assert.equal(error.cause, cause);
        return true;
      });
    }
  });

  test(`${name} log store: a commit over the bound is refused before anything is sent`, async () => {
    const { client, store } = make(ok);
    const half = 'é'.repeat(STORE_LOG_COMMIT_JSON_BYTES_MAX / 4);
    await assert.rejects(store.commit(2, [half, half, '{}'], HEAD), /the items take \d+ bytes of JSON, more than the 67108864/);
    assert.equal(client.calls.length, 0);
  });
}

test('redis log store: replies it cannot read are errors, never a guess; decoded JSON comes back as text', async () => {
  for (const reply of ['1', null, 2, 'OK']) {
    await assert.rejects(createRedisSessionLogStore({ client: evalClient(reply), sessionId: 's' }).commit(2, ['{}'], HEAD), /expected 0 or 1/);
  }
  await assert.rejects(createRedisSessionLogStore({ client: evalClient(-1), sessionId: 's' }).commit(2, ['{}'], HEAD), /do not match the head's length/);
  await assert.rejects(createRedisSessionLogStore({ client: evalClient('x'), sessionId: 's' }).items(0, 5), /expected a list/);
  // A client that decodes JSON itself (Upstash by default) hands values: they come back as JSON text.
  const decoding = createRedisSessionLogStore({ client: evalClient([{ type: 'CUSTOM', value: 1 }]), sessionId: 's' });
  assert.deepEqual(await decoding.items(0, 5), ['{"type":"CUSTOM","value":1}']);
  assert.equal(await createRedisSessionLogStore({ client: evalClient(JSON.parse(HEAD)), sessionId: 's' }).head(), HEAD);
  assert.equal(await createRedisSessionLogStore({ client: evalClient(null), sessionId: 's' }).head(), null);
});

test('postgres log store: a commit answer that is not "nothing" or "the head and every item" is an error', async () => {
  for (const rows of [[{ committed: '1', written: '1' }], [{ committed: '0', written: '2' }], [], [{ committed: '2', written: '2' }]]) {
    await assert.rejects(createPostgresSessionLogStore({ client: queryClient(rows), sessionId: 's' }).commit(2, ['{}', '{}'], HEAD), /expected 0 or 1 head and 2 items/);
  }
  assert.equal(await createPostgresSessionLogStore({ client: queryClient([{ committed: 0, written: 0 }]), sessionId: 's' }).commit(2, ['{}'], HEAD), false);
  const gap = createPostgresSessionLogStore({ client: queryClient([{ position: '4', item: '{}' }, { position: '6', item: '{}' }]), sessionId: 's' });
  await assert.rejects(gap.items(4, 10), /position 5 is missing from the stored log/);
  const late = createPostgresSessionLogStore({ client: queryClient([{ position: '5', item: '{}' }]), sessionId: 's' });
  await assert.rejects(late.items(4, 10), /position 4 is missing/);
});
