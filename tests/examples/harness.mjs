// Builds the example apps (examples/*) the way their README says: turnkeep packed with
// `npm pack` and installed from that tarball (never linked to the source tree), then the
// framework's own production build. The examples' other dependencies are installed by
// scripts/setup.sh (`npm ci`, re-run only when an example's lockfile changed).
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { ROOT } from '../support/wrangler-dev.mjs';

export const EXAMPLES = join(ROOT, 'examples');
const NPM_QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];

/** `npm pack` of the repository into `dir`; the tarball's path. */
export function packTurnkeep(dir) {
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', dir, ...NPM_QUIET], { cwd: ROOT }));
  return join(dir, packed[0].filename);
}

/**
 * Installs `tarball` into the example without touching its package.json or lockfile, and checks
 * that what got installed is a copy of the packed files, not a link into this repository.
 */
export function installTarball(exampleDir, tarball) {
  if (!existsSync(join(exampleDir, 'node_modules/.bin'))) {
    throw new Error(`${exampleDir}/node_modules is missing: run scripts/setup.sh (it installs the examples' dependencies)`);
  }
  execFileSync('npm', ['install', '--no-save', '--prefer-offline', ...NPM_QUIET, tarball], { cwd: exampleDir });
  const installed = join(exampleDir, 'node_modules/turnkeep');
  if (lstatSync(installed).isSymbolicLink()) throw new Error('turnkeep was linked, not installed from the tarball');
  if (existsSync(join(installed, 'src')) || existsSync(join(installed, 'js/cloudflare'))) {
    throw new Error('the installed turnkeep has files the tarball must not ship');
  }
}

/** Runs `command args` in `cwd` (output shown only on failure); the wall time in seconds. */
export function timed(command, args, { cwd, env = {} }) {
  const t0 = performance.now();
  try {
    execFileSync(command, args, { cwd, env: { ...process.env, ...env }, stdio: 'pipe', encoding: 'utf8' });
  } catch (error) {
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${error.stdout}${error.stderr}`);
  }
  return (performance.now() - t0) / 1000;
}

/** Removes build output so every run builds from scratch. */
export function clean(dir, names) {
  for (const name of names) rmSync(join(dir, name), { recursive: true, force: true });
}

/** `{ raw, gzip }` byte counts of `files` together (gzip level 9, each file on its own). */
export function sizeOf(files) {
  let raw = 0;
  let gzip = 0;
  for (const file of files) {
    const bytes = readFileSync(file);
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  return { raw, gzip };
}

export const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;

/** One line for the test log: `[examples] <what>: JS raw/gzip, wasm raw/gzip`. */
export function printSizes(what, js, wasm) {
  console.log(`[examples] ${what}: JS ${kB(js.raw)} (gzip ${kB(js.gzip)}), wasm ${kB(wasm.raw)} (gzip ${kB(wasm.gzip)})`);
}
