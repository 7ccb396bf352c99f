// Temporary directories for Durable Object storage and generated configs: one helper for the
// workerd tests, the streams tests and the benchmarks.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under the system temp dir (remove it with `removeDir`). */
export function tempDir(prefix = 'turnkeep-') {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Removes `dir` and everything under it; nothing happens when it is already gone. */
export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}
