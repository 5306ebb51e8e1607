import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most files wait on PostgreSQL, child processes and sockets: two at once even on two cores
    // (vitest's default there is one).
    maxWorkers: 2,
  },
});
