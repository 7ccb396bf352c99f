// The floor of an acknowledged fenced append on workerd, for bench/fanout.mjs (a benchmark
// fixture, never deployed): a bare JS Worker that forwards `/v1/stream/<name>` to a bare JS
// Durable Object, which stores each POST with the same three SQLite writes turnkeep's append
// makes (the row, the producer's state, the stream's meta row) in one transactionSync, and
// answers with the same headers. No protocol logic at all: no validation, no fencing (every seq
// is accepted), no JSON handling. What the workerd runtime itself costs per append (HTTP, the
// Worker -> object hop, the commit and its fsync) is in it; nothing of turnkeep is.
import { DurableObject } from 'cloudflare:workers';

const SECURITY_HEADERS = {
  'access-control-allow-origin': '*',
  'cross-origin-resource-policy': 'cross-origin',
  'x-content-type-options': 'nosniff',
};
const offset = (bytes) => `0000000000000000_${String(bytes).padStart(16, '0')}`;

export class SessionStream extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS rows (end_byte INTEGER PRIMARY KEY, start_byte INTEGER, data BLOB);
      CREATE TABLE IF NOT EXISTS meta (k INTEGER PRIMARY KEY, v TEXT);
      CREATE TABLE IF NOT EXISTS producers (id TEXT PRIMARY KEY, epoch INTEGER, last_seq INTEGER)`);
    this.tail = 0;
  }

  async fetch(request) {
    if (request.method === 'PUT') {
      const headers = { ...SECURITY_HEADERS, 'content-type': 'application/json', 'stream-next-offset': offset(0) };
      return new Response(null, { status: 201, headers });
    }
    const body = await request.arrayBuffer();
    const h = request.headers;
    const [id, epoch, seq] = ['producer-id', 'producer-epoch', 'producer-seq'].map((n) => h.get(n));
    const start = this.tail;
    this.tail += body.byteLength;
    this.ctx.storage.transactionSync(() => {
      this.sql.exec('INSERT INTO rows VALUES (?, ?, ?)', this.tail, start, body);
      this.sql.exec(
        'INSERT INTO producers VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET epoch = excluded.epoch, last_seq = excluded.last_seq',
        id,
        Number(epoch),
        Number(seq),
      );
      this.sql.exec('INSERT INTO meta VALUES (0, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v', JSON.stringify({ tail: this.tail }));
    });
    const headers = { ...SECURITY_HEADERS, 'stream-next-offset': offset(this.tail), 'producer-epoch': epoch, 'producer-seq': seq };
    return new Response(null, { status: 200, headers });
  }
}

export class ChatSession extends DurableObject {}

export default {
  fetch(request, env) {
    const name = new URL(request.url).pathname.slice('/v1/stream/'.length);
    return env.SESSION_STREAM.get(env.SESSION_STREAM.idFromName(name)).fetch(request);
  },
};
