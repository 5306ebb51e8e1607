import { describe, expect, it } from 'vitest';
import type { ColumnStep } from '../../src/cli/backfill/columnStep.js';
import { ProgressDisplay, formatDuration } from '../../src/cli/backfill/progressDisplay.js';
import { ProgressConflictError, planWalk, type ProgressRow } from '../../src/cli/backfill/progressTable.js';
import { parseTableArgument } from '../../src/cli/backfill/tableArgument.js';
import { main } from '../../src/cli/main.js';
import type { ColumnPolicy } from '../../src/policy/index.js';

function step(entry: string, recognisesOwnOutput: boolean): ColumnStep {
  return {
    policy: {} as ColumnPolicy, entry, recognisesOwnOutput,
    run: () => Promise.resolve({ changes: new Map(), alreadyDone: 0, problems: [] }),
  };
}

function row(operation: string, columnSet: string[], finished: boolean, rowsDone = 10): ProgressRow {
  return { table: 'public.t', operation, columnSet, lastKey: ['10'], endKey: ['99'], rowsDone, finishedAt: finished ? '2025-01-01' : null };
}

const email = step('email tokenise', true);
const ssn = step('ssn fpe', false);

describe('planWalk', () => {
  it('walks every column the first time', () => {
    const plan = planWalk('public.t', 'protect-table', [email, ssn], []);
    expect(plan.steps).toEqual([email, ssn]);
    expect(plan.key.columnSet).toEqual(['email tokenise', 'ssn fpe']);
    expect(plan.resume).toBeUndefined();
  });

  it('resumes a running walk over the same columns after its last key', () => {
    const plan = planWalk('public.t', 'protect-table', [ssn, email], [row('protect-table', ['email tokenise', 'ssn fpe'], false)]);
    expect(plan.resume).toEqual({ lastKey: ['10'], endKey: ['99'], rowsDone: 10 });
  });

  it('leaves out fpe columns a finished walk covered, whatever version it came from', () => {
    const plan = planWalk('public.t', 'rekey to v2', [email, step('ssn fpe from v3', false)],
      [row('rekey to v2', ['email tokenise', 'ssn fpe from v1'], true), row('protect-table', [], false)]);
    expect(plan.steps).toEqual([email]);
    expect(plan.done.map((s) => s.entry)).toEqual(['ssn fpe from v3']);
  });

  it('refuses to start over other columns while a walk is pending', () => {
    expect(() => planWalk('public.t', 'protect-table', [email], [row('protect-table', ['email tokenise', 'ssn fpe'], false)]))
      .toThrow(ProgressConflictError);
  });
});

describe('progress line', () => {
  it('shows rows done of the total, rows per second and time left', () => {
    let now = 0;
    const lines: string[] = [];
    const display = new ProgressDisplay({ live: false, write: (t) => lines.push(t) }, { label: 'public.t', total: 10_000, startDone: 1000, now: () => now });
    now = 2000;
    display.update(3000);
    expect(lines).toEqual(['public.t: 3,000 / 10,000 rows (30%), 1,000 rows/s, 7s left']);
    expect(formatDuration(3725)).toBe('1h02m');
  });

  it('redraws one line on a terminal', () => {
    const written: string[] = [];
    const display = new ProgressDisplay({ live: true, write: (t) => written.push(t) }, { label: 't', total: 5, startDone: 0, now: () => 0 });
    display.finish();
    expect(written).toEqual(['\rt: 0 / 5 rows (0%), 0 rows/s, ? left\x1b[K', '\n']);
  });
});

describe('command line', () => {
  it('reads table names as PostgreSQL does', () => {
    expect(parseTableArgument('Public."Customers"')).toEqual({ schema: 'public', table: 'Customers' });
    expect(parseTableArgument('orders')).toEqual({ schema: 'public', table: 'orders' });
    expect(() => parseTableArgument('a.b.c')).toThrow('not a table name; write it as schema.table');
  });

  it('explains in --help what is recognised and what only the progress table knows', async () => {
    const out: string[] = [];
    const code = await main(['protect-table', '--help'], { out: (t) => { out.push(t); }, err: () => undefined, env: {} });
    expect(code).toBe(0);
    expect(out.join('\n')).toContain('Only the progress table tells which rows are done');
  });
});
