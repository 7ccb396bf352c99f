// Serves the Worker with the workerd binary itself, from a generated config: no wrangler dev proxy
// and no Miniflare entry worker in front (each adds a hop to every request). Modules are the
// Worker's static import graph; bindings mirror wrangler.toml (SESSION_STREAM and CHAT_SESSION,
// SQLite-backed, stored under `persistDir`). `overrides` maps a module path relative to the
// repository root to the text (or bytes) to serve instead, so two versions of the same files can
// run side by side (the A/B benchmarks in bench/), or a Worker that exists only as text can run
// (bench/append-breakdown.mjs, with its own `objects`). Used by tests (a hard kill) and benchmarks.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { removeDir, tempDir } from './temp-dir.mjs';
import { ROOT, freePort } from './wrangler-dev.mjs';

const BINARY = join(ROOT, 'node_modules/@cloudflare/workerd-linux-64/bin/workerd');
const READY_TIMEOUT_MS = 30_000;
const LAUNCH_ATTEMPTS_MAX = 4;
/** wrangler.toml's Durable Object bindings: [binding name, class name], SQLite-backed. */
const TURNKEEP_OBJECTS = [['SESSION_STREAM', 'SessionStream'], ['CHAT_SESSION', 'ChatSession']];

/**
 * Starts workerd serving `entry` (a path relative to ROOT, default the demo Worker) with the
 * bindings of wrangler.toml (or `objects`, and `compatibilityFlags`, when given; `verbose` logs
 * every uncaught exception, as wrangler dev runs it). Resolves with
 * `{ baseUrl, pid, stop, kill }`; `kill()` is SIGKILL (no shutdown at all), `stop()` is SIGTERM.
 */
export async function serveWorkerd(options) {
  // A port picked free can be taken before workerd binds it (tests run in parallel): retry.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await serveOnce(options);
    } catch (error) {
      if (!error.addressInUse || attempt >= LAUNCH_ATTEMPTS_MAX) throw error;
    }
  }
}

async function serveOnce({
  persistDir,
  vars = {},
  entry = 'js/cloudflare/worker.mjs',
  overrides = {},
  objects = TURNKEEP_OBJECTS,
  compatibilityFlags = ['enable_request_signal'],
  verbose = false,
}) {
  const modules = [];
  const seen = new Set();
  const configDir = tempDir('turnkeep-workerd-');
  const load = (name, encoding) => (name in overrides ? overrides[name] : readFileSync(join(ROOT, name), encoding));
  // Each module is a file beside the config, which `embed`s it: a megabyte of wasm written into
  // the config as a hex literal took workerd hundreds of milliseconds to parse at every start.
  const embed = (name, content) => {
    const path = join(configDir, 'modules', name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    return `embed ${str(relative(configDir, path))}`;
  };
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const name = relative(ROOT, file);
    if (name.endsWith('.wasm')) return modules.push(`(name = ${str(name)}, wasm = ${embed(name, Buffer.from(load(name)))})`);
    const text = String(load(name, 'utf8'));
    if (name.endsWith('.html')) return modules.push(`(name = ${str(name)}, text = ${embed(name, text)})`);
    modules.push(`(name = ${str(name)}, esModule = ${embed(name, text)})`);
    for (const [, spec] of text.matchAll(/(?:import|export)\s*(?:[^'"]*?\sfrom\s*)?['"]([^'"]+)['"]/g)) {
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
    }
  };
  visit(join(ROOT, entry));
  mkdirSync(persistDir, { recursive: true });
  const port = await freePort();
  const bindings = [
    ...Object.entries(vars).map(([name, value]) => `(name = ${str(name)}, text = ${str(String(value))})`),
    ...objects.map(([name, className]) => `(name = ${str(name)}, durableObjectNamespace = ${str(className)})`),
  ];
  const namespaces = objects.map(
    ([, className]) => `(className = ${str(className)}, uniqueKey = ${str(`turnkeep-${className}`)}, enableSql = true)`,
  );
  const config = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker), (name = "storage", disk = (path = ${str(persistDir)}, writable = true)) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ ${modules.join(',\n')} ],
  compatibilityDate = "2026-04-20",
  compatibilityFlags = [ ${compatibilityFlags.map(str).join(', ')} ],
  bindings = [ ${bindings.join(', ')} ],
  durableObjectNamespaces = [ ${namespaces.join(', ')} ],
  durableObjectStorage = (localDisk = "storage"),
);
`;
  const configPath = join(configDir, 'config.capnp');
  writeFileSync(configPath, config);
  const child = spawn(BINARY, ['serve', '--experimental', ...(verbose ? ['--verbose'] : []), configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => { log += d; });
  child.stderr.on('data', (d) => { log += d; });
  const exited = new Promise((r) => child.once('exit', r));
  // A test file that ends without stop() (a timed-out test) must not leave workerd running.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  exited.then(() => process.off('exit', killOnExit));
  const end = async (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
    removeDir(configDir);
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) {
      removeDir(configDir);
      const error = new Error(`workerd exited early:\n${log}`);
      error.addressInUse = /Address already in use/.test(log);
      throw error;
    }
    try {
      await fetch(`${baseUrl}/v1/stream/`, { method: 'HEAD' });
      return { baseUrl, pid: child.pid, log: () => log, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
    } catch {
      if (Date.now() > deadline) {
        await end('SIGKILL');
        throw new Error(`workerd did not start:\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** A Cap'n Proto text string literal. */
function str(text) {
  return `"${text.replace(/[\\"\u0000-\u001f]/g, (c) => {
    const escapes = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
    return escapes[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  })}"`;
}
