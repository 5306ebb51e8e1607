/**
 * ConfirmedNames keeps the unnamed statement or portal apart from its map and answers `certain`
 * without building the candidate list, and a removal of a name that holds nothing is not recorded
 * at all: each must give what a plain map and the full candidate list give, whatever the order of
 * changes, answers and transaction ends.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfirmedNames, EVERY_NAME, type ChangeOutcome, type PendingChange } from '../../../src/proxy/enforcement/writePath/confirmedNames.js';

/** The same rules over one map for every name: what ConfirmedNames must keep giving. */
class ReferenceNames {
  private readonly confirmed = new Map<string, number>();
  private readonly pending: { name: string | typeof EVERY_NAME; value: number | undefined; batch: number; doomed: boolean; failureClears: boolean; settled: boolean }[] = [];

  change(name: string | typeof EVERY_NAME, value: number | undefined, batch: number, doomed: boolean, failureClears: boolean): number {
    this.pending.push({ name, value, batch, doomed, failureClears, settled: false });
    return this.pending.length - 1;
  }

  settle(index: number, outcome: ChangeOutcome): void {
    const change = this.pending[index];
    if (change === undefined || change.settled) return;
    change.settled = true;
    if (outcome === 'done' && !change.doomed) {
      if (change.name === EVERY_NAME) this.confirmed.clear();
      else if (change.value === undefined) this.confirmed.delete(change.name);
      else this.confirmed.set(change.name, change.value);
    } else if (outcome !== 'skipped' && change.failureClears && change.name !== EVERY_NAME) {
      this.confirmed.delete(change.name);
    }
  }

  clearConfirmed(): void {
    this.confirmed.clear();
  }

  candidates(name: string, batch: number): (number | undefined)[] {
    let values: (number | undefined)[] = [this.confirmed.get(name)];
    for (const change of this.pending) {
      if (change.settled || (change.name !== name && change.name !== EVERY_NAME)) continue;
      const after = change.name === EVERY_NAME ? undefined : change.value;
      if (change.doomed) {
        if (change.failureClears) values = [undefined];
      } else if (change.batch === batch) {
        values = [after];
      } else {
        values = [...values, after];
        if (change.failureClears) values.push(undefined);
      }
    }
    return [...new Set(values)];
  }
}

const NAMES = ['', 'a', 'b'];
const name = fc.oneof(fc.constantFrom(...NAMES), fc.constant(EVERY_NAME));
const operation = fc.oneof(
  fc.record({ op: fc.constant('change' as const), name, value: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }), doomed: fc.boolean(), failureClears: fc.boolean() }),
  fc.record({ op: fc.constant('settle' as const), pick: fc.nat(), outcome: fc.constantFrom<ChangeOutcome>('done', 'failed', 'skipped') }),
  fc.constant({ op: 'sync' as const }),
  fc.constant({ op: 'clear' as const }),
);
/**
 * With a Query's drop of a name, left out where it would change nothing (holdsNothing), and changes
 * settled in the order they were sent, as the server answers them.
 */
const inOrderOperation = fc.oneof(
  operation,
  fc.record({ op: fc.constant('removal' as const), name: fc.constantFrom(...NAMES) }),
);

describe('ConfirmedNames', () => {
  it.each([
    ['settled in any order', operation, false],
    ['settled in order, removals of what holds nothing left out', inOrderOperation, true],
  ] as const)('gives the candidates and the certain value a plain map gives, for the unnamed and named entries alike (%s)', (_, operations, inOrder) => {
    fc.assert(fc.property(fc.array(operations, { maxLength: 40 }), (steps) => {
      const names = new ConfirmedNames<number>();
      const reference = new ReferenceNames();
      const changes: { real: PendingChange<number> | undefined; model: number; settled?: boolean }[] = [];
      let batch = 1;
      for (const step of steps) {
        if (step.op === 'change') {
          const options = { doomed: step.doomed, failureClears: step.failureClears };
          changes.push({ real: names.change(step.name, step.value, batch, options), model: reference.change(step.name, step.value, batch, step.doomed, step.failureClears) });
        } else if (step.op === 'removal') {
          const real = names.holdsNothing(step.name) ? undefined : names.change(step.name, undefined, batch);
          changes.push({ real, model: reference.change(step.name, undefined, batch, false, false) });
        } else if (step.op === 'settle' && changes.length > 0) {
          const unsettled = inOrder ? changes.findIndex((c) => !c.settled) : step.pick % changes.length;
          if (unsettled < 0) continue;
          const change = changes[unsettled] as (typeof changes)[number];
          change.settled = true;
          if (change.real !== undefined) names.settle(change.real, step.outcome);
          reference.settle(change.model, step.outcome);
        } else if (step.op === 'sync') {
          batch++;
        } else if (step.op === 'clear') {
          names.clearConfirmed();
          reference.clearConfirmed();
        }
        for (const candidate of NAMES) {
          for (const at of [batch, batch + 1]) {
            const expected = reference.candidates(candidate, at);
            expect(new Set(names.candidates(candidate, at))).toEqual(new Set(expected));
            expect(names.certain(candidate, at)).toBe(expected.length === 1 ? expected[0] : undefined);
          }
        }
      }
    }), { numRuns: 500 });
  });
});
