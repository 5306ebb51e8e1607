import type { ColumnStep, ProblemReason } from './columnStep.js';
import type { TableLayout } from './tableLayout.js';

/** Primary keys listed per column and reason; the count is always complete. */
export const MAX_LISTED_KEYS = 100;

/** Counts of one column over a walk; problem rows by their primary key, never by value. */
export class ColumnTally {
  changed = 0;
  alreadyDone = 0;
  /** Per reason: how many, and the first MAX_LISTED_KEYS primary keys (memory stays flat). */
  readonly problems = new Map<ProblemReason, { count: number; keys: string[][] }>();

  problem(reason: ProblemReason, key: string[]): void {
    const entry = this.problems.get(reason) ?? { count: 0, keys: [] };
    entry.count++;
    if (entry.keys.length < MAX_LISTED_KEYS) entry.keys.push(key);
    this.problems.set(reason, entry);
  }

  problemCount(): number {
    let n = 0;
    for (const { count } of this.problems.values()) n += count;
    return n;
  }
}

/** How a walk ended. */
export type WalkEnd = 'finished' | 'batch-limit' | 'interrupted';

export interface WalkSummary {
  readonly layout: TableLayout;
  readonly dryRun: boolean;
  readonly end: WalkEnd;
  readonly batches: number;
  readonly rowsWalked: number;
  readonly seconds: number;
  readonly steps: readonly ColumnStep[];
  readonly tallies: ReadonlyMap<ColumnStep, ColumnTally>;
  /** Steps left out because an earlier walk finished them (fpe values carry no mark). */
  readonly done: readonly ColumnStep[];
  /** Column headings: `protected` / `moved to v2`, `already protected` / `already at v2`. */
  readonly changedHeading: string;
  readonly alreadyHeading: string;
  /** Row count of the walk this one resumed, when it resumed one. */
  readonly resumedAfter?: number;
}

const grouped = new Intl.NumberFormat('en-US');

const REASON_TEXT: Readonly<Record<ProblemReason, string>> = {
  not_of_kind: 'not a value of the kind',
  domain_too_small: 'too short for fpe (fewer than 100 possible values)',
  other_scope: 'tokens of another scope (left as they are, never tokenised twice)',
  not_a_token: 'not a token of any key version held',
  not_decryptable: 'not an fpe value of the --from-version key',
};

function keyText(key: readonly string[]): string {
  return key.length === 1 ? (key[0] ?? '') : `(${key.join(', ')})`;
}

/** Aligned columns; a row with fewer cells than the heading lets its last cell run on. */
function padTable(rows: readonly (readonly string[])[]): string[] {
  const full = rows.filter((r) => r.length === rows[0]?.length);
  const widths = rows[0]?.map((_, c) => Math.max(...full.map((r) => (r[c] ?? '').length))) ?? [];
  return rows.map((r) => `  ${r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c] ?? 0))).join('  ')}`);
}

function count(n: number, what: string): string {
  return `${grouped.format(n)} ${what}${n === 1 ? '' : 'es'}`;
}

function columnRows(s: WalkSummary): string[] {
  const changed = s.dryRun ? `would be ${s.changedHeading}` : s.changedHeading;
  const rows: string[][] = [['column', 'kind', 'method', changed, s.alreadyHeading, 'left as they are']];
  for (const step of s.steps) {
    const t = s.tallies.get(step) ?? new ColumnTally();
    rows.push([step.policy.column, step.policy.kind, step.policy.method,
      grouped.format(t.changed), grouped.format(t.alreadyDone), grouped.format(t.problemCount())]);
  }
  for (const step of s.done) {
    rows.push([step.policy.column, step.policy.kind, step.policy.method, 'done by an earlier finished run, not walked again']);
  }
  return padTable(rows);
}

function problemLines(s: WalkSummary): string[] {
  const lines: string[] = [];
  const keyNames = s.layout.key.map((k) => k.name).join(', ');
  for (const step of s.steps) {
    for (const [reason, { count, keys }] of s.tallies.get(step)?.problems ?? []) {
      const listed = keys.map(keyText).join(', ');
      const more = count > keys.length ? `, … (${grouped.format(count - keys.length)} more)` : '';
      lines.push(`  ${step.policy.column} (${step.policy.kind}): ${grouped.format(count)} ${REASON_TEXT[reason]}; `
        + `${keyNames}: ${listed}${more}`);
    }
  }
  return lines;
}

/** The report printed at the end of protect-table and rekey. */
export function renderSummary(s: WalkSummary): string {
  const what = s.dryRun ? 'read' : 'walked';
  const resumed = s.resumedAfter === undefined ? '' : `, resuming after ${grouped.format(s.resumedAfter)} rows done earlier`;
  const out = [
    `${s.layout.display}: ${grouped.format(s.rowsWalked)} rows ${what} in ${count(s.batches, 'batch')}, `
      + `${s.seconds.toFixed(1)}s${resumed}${s.dryRun ? ' (dry run: nothing written)' : ''}`,
    '',
    ...columnRows(s),
  ];
  const problems = problemLines(s);
  if (problems.length > 0) {
    out.push('', 'values left as they are, by primary key:', ...problems,
      s.dryRun ? '' : 'Correct them through the pgveil proxy (it protects what it writes); the other values are done.');
  }
  out.push('', endLine(s));
  return out.filter((line, i, all) => !(line === '' && all[i - 1] === '')).join('\n');
}

function endLine(s: WalkSummary): string {
  if (s.dryRun) return 'dry run: nothing was written';
  switch (s.end) {
    case 'finished': return `done: every row of ${s.layout.display} walked`;
    case 'batch-limit': return `stopped after ${count(s.batches, 'batch')} (--max-batches): run the same command again to continue`;
    case 'interrupted': return 'interrupted: every committed batch is recorded; run the same command again to continue';
  }
}
