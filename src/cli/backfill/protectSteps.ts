import type { Engine } from '../../engine/index.js';
import type { ColumnPolicy } from '../../policy/index.js';
import {
  allIndexes, protectEach, stepEntry, unprotectEach,
  type ColumnStep, type StepResult, type ValueProblem,
} from './columnStep.js';

/** The character masks and redactions put in place of what they hide. */
const MASK_CHARACTER = '*';

/**
 * tokenise: a value that unprotects is a token already (tags tell tokens from other text
 * exactly); a token of another scope is reported, never wrapped in a second token.
 */
function tokeniseStep(engine: Engine, policy: ColumnPolicy): ColumnStep {
  return {
    policy, entry: stepEntry(policy), recognisesOwnOutput: true,
    async run(values): Promise<StepResult> {
      const sorted = await unprotectEach(engine, policy, values, allIndexes(values));
      const fresh = await protectEach(engine, policy, values, sorted.invalidToken);
      const problems: ValueProblem[] = [
        ...sorted.invalidScope.map((index): ValueProblem => ({ index, reason: 'other_scope' })),
        ...fresh.problems,
      ];
      return { changes: fresh.outputs, alreadyDone: sorted.plain.size, problems };
    },
  };
}

/** fpe output looks like any other value of the kind: every value walked is encrypted. */
function fpeStep(engine: Engine, policy: ColumnPolicy): ColumnStep {
  return {
    policy, entry: stepEntry(policy), recognisesOwnOutput: false,
    async run(values): Promise<StepResult> {
      const { outputs, problems } = await protectEach(engine, policy, values, allIndexes(values));
      return { changes: outputs, alreadyDone: 0, problems };
    },
  };
}

/**
 * mask and redact at rest are one-way: a value equal to its own mask is done. Masks of most kinds
 * are no longer values of the kind (`***-**-6789`), so a value the kind refuses that holds the
 * mask character is taken for a mask too; other refused values are reported.
 */
function oneWayStep(engine: Engine, policy: ColumnPolicy): ColumnStep {
  return {
    policy, entry: stepEntry(policy), recognisesOwnOutput: true,
    async run(values): Promise<StepResult> {
      const { outputs, problems } = await protectEach(engine, policy, values, allIndexes(values));
      const changes = new Map<number, string>();
      let alreadyDone = 0;
      for (const [index, output] of outputs) {
        if (output === values[index]) alreadyDone++;
        else changes.set(index, output);
      }
      const real: ValueProblem[] = [];
      for (const problem of problems) {
        if (problem.reason === 'not_of_kind' && (values[problem.index] ?? '').includes(MASK_CHARACTER)) alreadyDone++;
        else real.push(problem);
      }
      return { changes, alreadyDone, problems: real };
    },
  };
}

/**
 * The step that brings a column's plaintext to its policy's form at rest; undefined for
 * passthrough, which stores plaintext (nothing to do).
 */
export function protectStep(engine: Engine, policy: ColumnPolicy): ColumnStep | undefined {
  switch (policy.method) {
    case 'tokenise': return tokeniseStep(engine, policy);
    case 'fpe': return fpeStep(engine, policy);
    case 'mask':
    case 'redact': return oneWayStep(engine, policy);
    case 'passthrough': return undefined;
  }
}
