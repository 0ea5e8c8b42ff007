import { defineConfig } from 'vitest/config';

// The packed package as its users get it (test/package): npm pack, then CommonJS and ESM consumer projects that
// install the tarball, compile and synth. Slow (a build, a pack and two npm installs), so apart from the unit tests.
export default defineConfig({
  test: {
    include: ['test/package/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 600_000,
  },
});
