// Only the conformance suite; its own CLI cannot find a test file, so this config names one.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/streams-conformance/conformance.test.mjs'],
    root: new URL('../..', import.meta.url).pathname,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
