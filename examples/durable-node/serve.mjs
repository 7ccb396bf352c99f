// Serves the durable chat (app.mjs) on a database that is already running. Configured by the
// environment:
//   TURNKEEP_STORE   redis | postgres                      (required)
//   REDIS_URL / DATABASE_URL                               (the server to use)
//   TURNKEEP_CLIENT  redis | ioredis, or pg | postgres     (the client library; default the first)
//   HOST, PORT       default 127.0.0.1:8080 (PORT=0 picks a free port)
//   DEMO_CHUNK_DELAY_MS, TURN_TIMEOUT_MS, CLEANUP_TIMEOUT_MS
// Prints `listening on http://HOST:PORT/` once it accepts requests; SIGTERM/SIGINT stop it.
import { durableChatServer } from './app.mjs';
import { openStore } from './stores.mjs';

export async function serve(env = process.env) {
  const store = env.TURNKEEP_STORE;
  const url = store === 'redis' ? env.REDIS_URL : env.DATABASE_URL;
  if (!url) throw new Error(`set TURNKEEP_STORE=redis with REDIS_URL, or TURNKEEP_STORE=postgres with DATABASE_URL`);
  const opened = await openStore({ store, url, client: env.TURNKEEP_CLIENT || undefined });
  const server = durableChatServer(opened, {
    chunkDelayMs: integer(env.DEMO_CHUNK_DELAY_MS),
    timeoutMs: integer(env.TURN_TIMEOUT_MS),
    cleanupTimeoutMs: integer(env.CLEANUP_TIMEOUT_MS),
  });
  const host = env.HOST || '127.0.0.1';
  await new Promise((resolve) => server.listen(Number(env.PORT ?? 8080), host, resolve));
  const stop = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await opened.close();
  };
  return { url: `http://${host}:${server.address().port}/`, stop };
}

function integer(text) {
  return text === undefined || text === '' ? undefined : Number(text);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { url, stop } = await serve();
  console.log(`listening on ${url}`);
  for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => stop().then(() => process.exit(0)));
}
