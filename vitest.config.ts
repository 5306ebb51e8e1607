import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most files wait on PostgreSQL, child processes and sockets: at least two at once, even on two
    // cores (vitest's default is one fewer than the cores).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
