import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Files that time the event loop's pauses or a call's wall-clock time against a tight budget: they
 * run after the others, one at a time, so that no other test file's load lands in their figures.
 */
const TIMED = [
  'test/api/apiAttack.test.ts',
  'test/api/batchPauses.test.ts',
  'test/api/floods.test.ts',
  'test/engine/slicedWork.test.ts',
  'test/proxy/enforcement/catalogReadGap.test.ts',
  'test/proxy/enforcement/largeValues.test.ts',
  'test/proxy/enforcement/uuidText.test.ts',
  'test/sql/parseWorker.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: TIMED,
          // Most files wait on PostgreSQL, child processes and sockets: at least two at once, even
          // on two cores (vitest's default is one fewer than the cores).
          maxWorkers: Math.max(2, availableParallelism() - 1),
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'timed', include: TIMED, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
