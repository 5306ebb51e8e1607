import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KINDS, type createEngine, type Kind } from '../../src/index.js';

/**
 * Tokens and fpe outputs of a fixed key and scope for every kind, recorded once: the engine is
 * vaultless, so a change in any output would strand every value stored before it. Each value is
 * checked both alone (the proxy's one value per call) and inside its batch, the two code paths.
 */
interface Golden {
  input: string[];
  tokenise: string[];
  fpe: string[];
  /** Tokens as an earlier version spelled them (email TLDs with a digit): they must still read back. */
  tokeniseAsFirstWritten?: string[];
}

const golden = JSON.parse(readFileSync(new URL('../fixtures/golden-tokens.json', import.meta.url), 'utf8')) as Record<Kind, Golden>;
const options = (method: 'tokenise' | 'fpe') => ({ method, scope: 'golden' });

/** The golden-token checks against an engine from `create` (run with and without the native FF1 addon). */
export function goldenTokenSuite(title: string, create: typeof createEngine): void {
  describe(title, () => {
    const engine = create({ masterKey: Buffer.alloc(32, 7) });

    it('records all fourteen kinds', () => {
      expect(Object.keys(golden).sort()).toEqual([...KINDS].sort());
    });

    it('reads email tokens spelled with a digit in the TLD, as first written', async () => {
      const { input, tokeniseAsFirstWritten } = golden.email;
      expect(tokeniseAsFirstWritten?.some((token) => /\.[a-z]*[0-9]/.test(token.slice(token.lastIndexOf('.'))))).toBe(true);
      expect((await engine.unprotect('email', tokeniseAsFirstWritten ?? [], options('tokenise'))).result).toEqual(input);
    });

    describe.each(KINDS.map((kind) => [kind]))('%s', (kind) => {
      const { input, tokenise, fpe } = golden[kind];

      it.each([['tokenise', tokenise], ['fpe', fpe]] as const)('%s: a batch and each value alone give the recorded outputs', async (method, expected) => {
        expect((await engine.protect(kind, input, options(method))).result).toEqual(expected);
        for (const [i, value] of input.entries()) {
          expect((await engine.protect(kind, [value], options(method))).result).toEqual([expected[i]]);
        }
      });

      it.each([['tokenise', tokenise], ['fpe', fpe]] as const)('%s: the recorded outputs unprotect, batched and alone', async (method, recorded) => {
        expect((await engine.unprotect(kind, recorded, options(method))).result).toEqual(input);
        for (const [i, token] of recorded.entries()) {
          expect((await engine.unprotect(kind, [token], options(method))).result).toEqual([input[i]]);
        }
      });
    });
  });
}
