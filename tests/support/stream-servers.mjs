// The two Durable Streams servers the session-log tests run against: the demo Worker in workerd
// (Miniflare from wrangler.toml, STREAMS_PUBLIC=1 so streams are read and written directly) and
// the reference server (@durable-streams/server) in this process. Both with a 1 s long-poll.
import { DurableStreamTestServer } from '@durable-streams/server';
import { removeDir, startWorker, tempDir } from '../workerd/harness.mjs';

/** Starts both; resolves with `{ workerUrl, referenceUrl, stop() }`. */
export async function startStreamServers(label) {
  const state = tempDir(`turnkeep-${label}-`);
  const worker = await startWorker({ persistDir: state, bindings: { STREAMS_PUBLIC: '1', STREAMS_LONG_POLL_MS: '1000' } });
  const reference = new DurableStreamTestServer({ host: '127.0.0.1', port: 0, longPollTimeout: 1000 });
  const referenceUrl = (await reference.start()).replace(/\/$/, '');
  return {
    workerUrl: worker.url,
    referenceUrl,
    async stop() {
      await worker.stop();
      removeDir(state);
      await reference.stop();
    },
  };
}
