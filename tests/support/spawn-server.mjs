// Starts a server process and waits until its output says it is ready: `wrangler dev`
// (wrangler-dev.mjs) and the example apps (`next start`, the SvelteKit Worker under wrangler).
// The process gets its own process group, so `stop()` reaches its children too (workerd, the
// Next.js server), and it is waited for.
import { spawn } from 'node:child_process';

/**
 * Spawns `command args` in `cwd` and resolves once `ready` matches its stdout+stderr, with
 * `{ child, output(), stop(), kill() }` (`kill()`: SIGKILL to the group, not waited for).
 * Rejects (after stopping it) when it is not ready within `timeoutMs`, or when it exits first;
 * then `error.output` holds what it printed and `error.addressInUse` says whether it died on a
 * taken port.
 */
export async function spawnServer({ command, args, cwd, env = {}, ready, timeoutMs = 60_000 }) {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // own process group, so stop() reaches the children too
  });
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', resolve));
  /** SIGKILL to the whole process group, at once: no shutdown code runs. */
  const kill = () => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  // A test file that ends without stop() (its test timed out, or it was told to exit) must not
  // leave the server running: it would hold the machine, and CI, after the file is gone.
  process.once('exit', kill);
  exited.then(() => process.off('exit', kill));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await exited;
  };
  await new Promise((resolve, reject) => {
    const fail = (message) => {
      const error = new Error(`${message}:\n${output}`);
      error.output = output;
      error.addressInUse = /Address already in use|EADDRINUSE/.test(output);
      reject(error);
    };
    const timer = setTimeout(() => {
      stop().finally(() => fail(`${command} was not ready in ${timeoutMs} ms`));
    }, timeoutMs);
    const onData = (chunk) => {
      output += chunk;
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    exited.then((code) => {
      clearTimeout(timer);
      fail(`${command} exited (${code}) before it was ready`);
    });
  });
  return { child, output: () => output, stop, kill };
}
