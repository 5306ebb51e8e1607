import { currentTokenSpelling, type Engine } from '../../engine/index.js';
import type { ColumnPolicy } from '../../policy/index.js';
import {
  allIndexes, protectEach, stepEntry, unprotectEach,
  type ColumnStep, type StepResult, type ValueProblem,
} from './columnStep.js';

/** The engines a rekey needs; each is built from the configuration's keys. */
export interface RekeyEngines {
  /** The new key version only: what it unprotects is at the target version already. */
  readonly targetOnly: Engine;
  /** The new version as current plus every previous key: unprotects old tokens, protects new ones. */
  readonly all: Engine;
  /** The --from-version key as current, for fpe columns (fpe values carry no version). */
  readonly fpeSource?: { readonly version: number; readonly engine: Engine };
}

/**
 * tokenise: tokens carry their key version. Tokens of the target version are left as they are,
 * or only respelled where pgveil now writes the same token differently (an email token's TLD);
 * tokens of an older one are unprotected and protected again with the target key.
 */
function tokeniseRekeyStep(engines: RekeyEngines, policy: ColumnPolicy): ColumnStep {
  return {
    policy, entry: stepEntry(policy), recognisesOwnOutput: true,
    async run(values): Promise<StepResult> {
      const current = await unprotectEach(engines.targetOnly, policy, values, allIndexes(values));
      const older = await unprotectEach(engines.all, policy, values, current.invalidToken);
      const plain = [...older.plain.values()];
      const indexes = [...older.plain.keys()];
      const fresh = await protectEach(engines.all, policy, plain, allIndexes(plain));
      const changes = new Map<number, string>();
      for (const [n, token] of fresh.outputs) changes.set(indexes[n] as number, token);
      for (const index of current.plain.keys()) {
        const stored = values[index] as string;
        const respelled = currentTokenSpelling(policy.kind, stored);
        if (respelled !== stored) changes.set(index, respelled);
      }
      const problems: ValueProblem[] = [
        ...[...current.invalidScope, ...older.invalidScope].map((index): ValueProblem => ({ index, reason: 'other_scope' })),
        ...older.invalidToken.map((index): ValueProblem => ({ index, reason: 'not_a_token' })),
        ...fresh.problems.map((p): ValueProblem => ({ index: indexes[p.index] as number, reason: p.reason })),
      ];
      return { changes, alreadyDone: current.plain.size - (changes.size - fresh.outputs.size), problems };
    },
  };
}

/** fpe: decrypted with the --from-version key and encrypted with the target key. */
function fpeRekeyStep(engines: RekeyEngines, source: NonNullable<RekeyEngines['fpeSource']>, policy: ColumnPolicy): ColumnStep {
  return {
    policy, entry: stepEntry(policy, ` from v${source.version}`), recognisesOwnOutput: false,
    async run(values): Promise<StepResult> {
      const decrypted = await unprotectEach(source.engine, policy, values, allIndexes(values));
      const plain = [...decrypted.plain.values()];
      const indexes = [...decrypted.plain.keys()];
      const fresh = await protectEach(engines.all, policy, plain, allIndexes(plain));
      const changes = new Map<number, string>();
      for (const [n, value] of fresh.outputs) changes.set(indexes[n] as number, value);
      const problems: ValueProblem[] = [
        ...decrypted.invalidToken.map((index): ValueProblem => ({ index, reason: 'not_decryptable' })),
        ...fresh.problems.map((p): ValueProblem => ({ index: indexes[p.index] as number, reason: p.reason })),
      ];
      return { changes, alreadyDone: 0, problems };
    },
  };
}

/**
 * The step that moves a column to the target key version; undefined for methods whose stored
 * values do not depend on a key (mask, redact, passthrough). fpe columns need `fpeSource`.
 */
export function rekeyStep(engines: RekeyEngines, policy: ColumnPolicy): ColumnStep | undefined {
  switch (policy.method) {
    case 'tokenise': return tokeniseRekeyStep(engines, policy);
    case 'fpe':
      if (!engines.fpeSource) throw new Error(`fpe column ${policy.key} needs the --from-version key`);
      return fpeRekeyStep(engines, engines.fpeSource, policy);
    case 'mask':
    case 'redact':
    case 'passthrough':
      return undefined;
  }
}
