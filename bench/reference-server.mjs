// The reference Durable Streams server (@durable-streams/server) in a child process, for the
// benchmarks that run it beside turnkeep (streams.mjs, fanout.mjs).
import { spawn } from 'node:child_process';
import { ROOT } from '../tests/streams-conformance/harness.mjs';

/** Starts the reference server in a child process; resolves with its URL and a stop(). */
export async function startReference(dataDir) {
  const script = `
    import { DurableStreamTestServer } from '@durable-streams/server';
    const server = new DurableStreamTestServer({ host: '127.0.0.1', port: 0, longPollTimeout: 3000,
      ${dataDir ? `dataDir: ${JSON.stringify(dataDir)},` : ''} });
    console.log('URL ' + await server.start());
    process.on('SIGTERM', async () => { await server.stop(); process.exit(0); });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /URL (\S+)/.exec(out);
      if (m) resolve(m[1].replace(/\/$/, ''));
    });
    child.once('exit', () => reject(new Error(`reference server exited: ${out}`)));
  });
  return { baseUrl: url, pid: child.pid, stop: async () => { child.kill('SIGTERM'); await exited; } };
}
