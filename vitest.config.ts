import { defineConfig } from 'vitest/config';

// Unit tests: pure logic, no cluster. End-to-end tests have their own config (vitest.e2e.config.ts).
export default defineConfig({
  test: {
    include: [
      'core/**/*.test.ts',
      'constructs/**/*.test.ts',
      'cli/**/*.test.ts',
      'examples/**/*.test.ts',
      'gitops/**/*.test.ts',
      'test/unit/**/*.test.ts',
      'agent/**/*.test.ts',
    ],
    testTimeout: 60_000,
  },
});
