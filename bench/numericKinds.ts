/**
 * ccn fpe throughput: the whole KindHandler.fpe call (parse, Luhn, one cipher call, format) at
 * batch 1 and batch 1000, encrypt and decrypt, next to the cipher alone on the same 15-digit
 * bodies. Run: npx tsx bench/numericKinds.ts. Prints rates only, never values.
 * Each figure is the best of several rounds, so that a busy machine shows its quiet moments.
 */
import { randomBytes } from 'node:crypto';
import { createFpeCipher } from '../src/engine/crypto/createFpeCipher.js';
import type { FpeCipher } from '../src/engine/crypto/fpeCipher.js';
import { ccnKind } from '../src/engine/kinds/ccn.js';
import type { FpeDirection } from '../src/engine/kinds/kind.js';

const ROUNDS = 7;
const VALUES_PER_ROUND = 100_000;

/** Card numbers "4xxx xxxx xxxx xxxx" with random digits and a valid Luhn check digit. */
function cards(count: number): string[] {
  const out: string[] = [];
  for (let n = 0; n < count; n++) {
    const digits = [4, ...Array.from(randomBytes(14), (b) => b % 10)];
    let sum = 0;
    for (let j = digits.length - 1, doubled = true; j >= 0; j--, doubled = !doubled) {
      const d = digits[j] ?? 0;
      sum += doubled ? (d * 2 > 9 ? d * 2 - 9 : d * 2) : d;
    }
    digits.push((10 - (sum % 10)) % 10);
    out.push(digits.join('').replace(/(\d{4})(?=\d)/g, '$1 '));
  }
  return out;
}

/** Best rate, in values per second, of `run(batch)` over ROUNDS rounds of VALUES_PER_ROUND values. */
function rate<T>(batches: readonly (readonly T[])[], run: (batch: readonly T[]) => unknown): number {
  const batchSize = batches[0]?.length ?? 1;
  const callsPerRound = Math.ceil(VALUES_PER_ROUND / batchSize);
  let best = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let c = 0; c < callsPerRound; c++) run(batches[c % batches.length] ?? []);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    best = Math.max(best, (callsPerRound * batchSize) / seconds);
  }
  return best;
}

function fpeAll(cipher: FpeCipher, batch: readonly string[], direction: FpeDirection): string[] {
  return ccnKind.fpe(batch, direction, cipher, 'en').map((r) => {
    if (typeof r !== 'string') throw new Error(`ccn fpe failed: ${r.failure}`);
    return r;
  });
}

function main(): void {
  const cipher = createFpeCipher(randomBytes(32));
  const tweak = new Uint8Array(Buffer.from('4 4 4 4'));
  const format = (n: number): string => `${Math.round(n).toLocaleString('en-US').padStart(11)} values/s`;

  for (const batchSize of [1, 1000]) {
    const plain = Array.from({ length: Math.max(1, 20_000 / batchSize) }, () => cards(batchSize));
    const encrypted = plain.map((batch) => fpeAll(cipher, batch, 'encrypt'));
    const bodies = plain.map((batch) => batch.map((v) => Uint16Array.from(v.replace(/\D/g, '').slice(0, -1), Number)));

    const encrypt = rate(plain, (batch) => ccnKind.fpe(batch, 'encrypt', cipher, 'en'));
    const decrypt = rate(encrypted, (batch) => ccnKind.fpe(batch, 'decrypt', cipher, 'en'));
    const cipherOnly = rate(bodies, (batch) => cipher.encryptNumerals(10, batch, tweak));
    console.log(`ccn fpe batch ${String(batchSize).padStart(4)}: encrypt ${format(encrypt)}  decrypt ${format(decrypt)}  (cipher alone ${format(cipherOnly)})`);
  }
}

main();
