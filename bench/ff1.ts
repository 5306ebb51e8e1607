/**
 * FF1 throughput on 15-digit radix-10 values (credit-card bodies): pgveil's batched FF1, the
 * FpeCipher on top of it, and @noble/ciphers' FF1 on the same values in the same run.
 * Run: npx tsx bench/ff1.ts [seconds per measurement, default 1]
 */
import { randomBytes } from 'node:crypto';
import { FF1 as NobleFF1 } from '@noble/ciphers/ff1.js';
import { createFpeCipher } from '../src/engine/crypto/createFpeCipher.js';
import { FF1 } from '../src/engine/crypto/ff1.js';

const SECONDS = Number(process.argv[2] ?? 1);
const DIGITS = 15;
const BATCHES = [1, 1000] as const;

const key = randomBytes(32);
const tweak = new Uint8Array(Buffer.from('ccn', 'utf8'));
const ff1 = new FF1(key, 10);
const cipher = createFpeCipher(key);
const noble = NobleFF1(10, key, tweak);

function randomValues(count: number): Uint16Array[] {
  return Array.from({ length: count }, () => Uint16Array.from({ length: DIGITS }, () => Math.floor(Math.random() * 10)));
}

/**
 * Values per CPU-second of `run` (which handles `batch` values per call): CPU time of this
 * process rather than wall time, so other load on a shared machine skews the figure less.
 */
function measure(batch: number, run: () => void): number {
  for (let i = 0; i < 200; i++) run(); // warm up the JIT
  let values = 0;
  const start = process.cpuUsage();
  let micros = 0;
  while (micros < SECONDS * 1e6) {
    for (let i = 0; i < 20; i++) run();
    values += 20 * batch;
    const used = process.cpuUsage(start);
    micros = used.user + used.system;
  }
  return (values / micros) * 1e6;
}

function format(rate: number): string {
  return `${Math.round(rate).toLocaleString('en-US').padStart(11)} values/s`;
}

console.log(`FF1, radix 10, ${DIGITS} digits, AES-256, values per CPU-second on one core (${SECONDS} s per figure)\n`);
for (const batch of BATCHES) {
  const plain = randomValues(batch);
  const encrypted = ff1.encrypt(plain, tweak);
  const plainArrays = plain.map((x) => Array.from(x));
  const encryptedArrays = encrypted.map((x) => Array.from(x));
  const rows: [string, number, number][] = [];
  const ours = measure(batch, () => ff1.encrypt(plain, tweak));
  const oursDecrypt = measure(batch, () => ff1.decrypt(encrypted, tweak));
  const viaCipher = measure(batch, () => cipher.encryptNumerals(10, plain, tweak));
  const viaCipherDecrypt = measure(batch, () => cipher.decryptNumerals(10, encrypted, tweak));
  // noble is slow: measure it over at most 50 values per call so a figure stays within SECONDS.
  const nobleBatch = Math.min(batch, 50);
  const nobleEncrypt = measure(nobleBatch, () => { for (let j = 0; j < nobleBatch; j++) noble.encrypt(plainArrays[j] as number[]); });
  const nobleDecrypt = measure(nobleBatch, () => { for (let j = 0; j < nobleBatch; j++) noble.decrypt(encryptedArrays[j] as number[]); });
  rows.push(['FF1 class', ours, oursDecrypt], ['FpeCipher.encryptNumerals', viaCipher, viaCipherDecrypt], ['@noble/ciphers FF1', nobleEncrypt, nobleDecrypt]);
  console.log(`batch ${batch}`);
  for (const [name, enc, dec] of rows) {
    console.log(`  ${name.padEnd(26)} encrypt ${format(enc)}   decrypt ${format(dec)}`);
  }
  console.log(`  ratio FF1 class / noble        encrypt ${(ours / nobleEncrypt).toFixed(1).padStart(6)}x              decrypt ${(oursDecrypt / nobleDecrypt).toFixed(1).padStart(6)}x\n`);
}

// Other shapes the kinds send, batch 1000, FpeCipher only.
const shapes: [string, () => void][] = (() => {
  const digits = randomValues(1000);
  const distinctTweaks = digits.map((_, j) => new Uint8Array([j & 255, 1, 2]));
  const leading = digits.map((x) => { const y = x.slice(); y[0] = 1 + ((y[0] ?? 0) % 9); return y; });
  const ipv4 = Array.from({ length: 1000 }, () => BigInt(Math.floor(Math.random() * 2 ** 32)));
  const uuidBits = Array.from({ length: 1000 }, () => BigInt(`0x${randomBytes(16).toString('hex')}`) >> 6n);
  const fourDigits = Array.from({ length: 1000 }, () => Uint16Array.from({ length: 4 }, () => Math.floor(Math.random() * 10)));
  return [
    ['15 digits, a tweak per value', () => cipher.encryptNumerals(10, digits, distinctTweaks)],
    ['15 digits, leadingNonZero', () => cipher.encryptNumerals(10, leading, tweak, { leadingNonZero: true })],
    ['4 digits (permutation)', () => cipher.encryptNumerals(10, fourDigits, tweak)],
    ['integer < 2^32 (FF1 radix 2)', () => cipher.encryptInteger(1n << 32n, ipv4, tweak)],
    ['integer < 2^122 (BigInt path)', () => cipher.encryptInteger(1n << 122n, uuidBits, tweak)],
  ];
})();
console.log('FpeCipher encrypt, batch 1000, other shapes');
for (const [name, run] of shapes) console.log(`  ${name.padEnd(32)} ${format(measure(1000, run))}`);
