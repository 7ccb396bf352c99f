// Real Redis and PostgreSQL servers for the storage adapter tests and the durable Node example:
// Debian's `redis-server` and PostgreSQL (installed by scripts/setup.sh), started on a free
// loopback port with their data in a directory of their own, stopped by `stop()`.
//
// PostgreSQL refuses to run as root, so under root (CI, this machine) initdb and postgres run
// as the `postgres` system user that Debian's package creates.
import { spawn, execFileSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { removeDir, tempDir } from './temp-dir.mjs';

/** How long a server may take to say it is ready. */
const SERVER_READY_MS_MAX = 30_000;
/** How long a server may take to exit after it was told to stop. */
const SERVER_STOP_MS_MAX = 10_000;

/**
 * Starts `redis-server` on 127.0.0.1. Without `dataDir` it keeps nothing on disk (`--save ''`)
 * and its temp dir is removed on stop; with `dataDir` it keeps an append-only file there.
 * @returns {Promise<{ url: string, port: number, stop(): Promise<void> }>}
 */
export async function startRedis({ dataDir } = {}) {
  const dir = dataDir ?? tempDir('turnkeep-redis-');
  const port = await freePort();
  const persistence = dataDir ? ['--appendonly', 'yes'] : ['--save', '', '--appendonly', 'no'];
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--daemonize', 'no', '--dir', dir, ...persistence];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  await waitForLine(child, /Ready to accept connections/, 'redis-server');
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => stopChild(child, 'SIGTERM').finally(() => dataDir || removeDir(dir)),
  };
}

/**
 * Starts PostgreSQL on 127.0.0.1 (superuser `turnkeep`, trust auth, database `postgres`).
 * Without `dataDir` the cluster lives in a temp dir removed on stop, with durability traded for
 * speed (fsync off); with `dataDir` it is created there once and reused on the next start.
 * @returns {Promise<{ url: string, port: number, stop(): Promise<void> }>}
 */
export async function startPostgres({ dataDir } = {}) {
  const bin = postgresBin();
  const dir = dataDir ?? tempDir('turnkeep-postgres-');
  const user = serverUser();
  if (user) chownSync(dir, user.uid, user.gid);
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    execFileSync(join(bin, 'initdb'), ['-D', dir, '-U', 'turnkeep', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      ...user,
    });
  }
  const port = await freePort();
  const fast = dataDir ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'];
  const args = ['-D', dir, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', ...fast];
  const child = spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'pipe', 'pipe'], ...user });
  await waitForLine(child, /database system is ready to accept connections/, 'postgres');
  return {
    url: `postgres://turnkeep@127.0.0.1:${port}/postgres`,
    port,
    // SIGINT is PostgreSQL's "fast" shutdown: it ends sessions and exits cleanly.
    stop: () => stopChild(child, 'SIGINT').finally(() => dataDir || removeDir(dir)),
  };
}

/** The newest Debian PostgreSQL bin dir, else the dir of `initdb` on PATH. */
function postgresBin() {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'postgres'))) : [];
  if (versions.length > 0) return join(root, versions.sort((a, b) => Number(a) - Number(b)).at(-1), 'bin');
  const initdb = execFileSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).trim();
  if (!initdb) throw new Error('PostgreSQL is not installed: run scripts/setup.sh');
  return join(initdb, '..');
}

/** `{ uid, gid }` of the `postgres` user when we are root (spawn runs the server as it), else undefined. */
function serverUser() {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** A TCP port nothing listens on right now (the OS picks it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Resolves when `child` prints a line matching `ready`; rejects (with its output) if it exits first or takes too long. */
function waitForLine(child, ready, name) {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`${name} was not ready after ${SERVER_READY_MS_MAX} ms`)), SERVER_READY_MS_MAX);
    const onData = (chunk) => {
      output += chunk;
      if (ready.test(output)) {
        cleanup();
        resolve();
      }
    };
    const onExit = (code) => fail(new Error(`${name} exited with ${code} before it was ready`));
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.stderr.off('data', onData);
      child.off('exit', onExit);
      // Keep draining its output so a chatty server never blocks on a full pipe.
      child.stdout.resume();
      child.stderr.resume();
    };
    const fail = (error) => {
      cleanup();
      child.kill('SIGKILL');
      reject(new Error(`${error.message}:\n${output.slice(-2000)}`));
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    child.once('exit', onExit);
    // A test process that dies never leaves a server behind.
    process.once('exit', () => child.kill('SIGKILL'));
  });
}

/** Sends `signal`, waits for the exit (SIGKILL after SERVER_STOP_MS_MAX). */
function stopChild(child, signal) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), SERVER_STOP_MS_MAX);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}
