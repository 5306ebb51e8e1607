import { nativeFf1, nativeFf1Status, type NativeFf1 } from '../../../src/engine/crypto/nativeFf1.js';

/** PGVEIL_NATIVE=0: the machine has no C compiler, so tests of the native addon do not apply. */
export const nativeSwitchedOff = process.env.PGVEIL_NATIVE === '0';

/** The addon, or a loud failure: CI builds it, so a missing addon is a broken build, not a skip. */
export function loadedNativeFf1(): NativeFf1 {
  if (!nativeFf1) {
    throw new Error(`the native FF1 addon is ${nativeFf1Status}: \`npm run build:native\` builds it; set PGVEIL_NATIVE=0 only on a machine without a C compiler`);
  }
  return nativeFf1;
}

/** The FF1 implementations to test: TypeScript, and the native addon unless switched off. */
export const FF1_IMPLEMENTATIONS: readonly (readonly [string, () => NativeFf1 | null])[] = nativeSwitchedOff
  ? [['TypeScript', () => null]]
  : [['TypeScript', () => null], ['native', loadedNativeFf1]];

/** What `f` throws; undefined when it returns. */
export function thrownBy(f: () => void): unknown {
  try {
    f();
  } catch (error) {
    return error;
  }
  return undefined;
}
