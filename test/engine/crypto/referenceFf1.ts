import { createCipheriv } from 'node:crypto';

/**
 * A literal, unbatched transcription of SP 800-38G FF1 (Algorithms 7 and 8) with BigInt, for
 * what noble cannot check: radix 65536, whose [radix]_3 needs its third byte.
 */
export function referenceFf1(key: Uint8Array, radix: number, x: readonly number[], tweak: Uint8Array, decrypt: boolean): number[] {
  const aes = (block: Uint8Array): Uint8Array => {
    const cipher = createCipheriv(`aes-${key.length * 8}-ecb`, key, null).setAutoPadding(false);
    return new Uint8Array(cipher.update(block));
  };
  const R = BigInt(radix);
  const num = (xs: readonly number[]): bigint => xs.reduce((acc, d) => acc * R + BigInt(d), 0n);
  const str = (value: bigint, m: number): number[] => {
    const out = new Array<number>(m).fill(0);
    for (let i = m - 1; i >= 0; i--, value /= R) out[i] = Number(value % R);
    return out;
  };
  const bytes = (value: bigint, length: number): number[] => {
    const out = new Array<number>(length).fill(0);
    for (let i = length - 1; i >= 0; i--, value >>= 8n) out[i] = Number(value & 255n);
    return out;
  };
  const n = x.length;
  const t = tweak.length;
  const u = Math.floor(n / 2);
  const v = n - u;
  const b = Math.ceil((R ** BigInt(v) - 1n).toString(2).length / 8);
  const d = 4 * Math.ceil(b / 4) + 4;
  const P = [1, 2, 1, ...bytes(R, 3), 10, u % 256, ...bytes(BigInt(n), 4), ...bytes(BigInt(t), 4)];
  const pad = (((-t - b - 1) % 16) + 16) % 16;
  let A = x.slice(0, u);
  let B = x.slice(u);
  for (let step = 0; step < 10; step++) {
    const i = decrypt ? 9 - step : step;
    const Q = [...tweak, ...new Array<number>(pad).fill(0), i, ...bytes(num(decrypt ? A : B), b)];
    const PQ = [...P, ...Q];
    let y: Uint8Array = new Uint8Array(16);
    for (let k = 0; k < PQ.length; k += 16) y = aes(Uint8Array.from(y, (byte, j) => byte ^ (PQ[k + j] as number)));
    const S: number[] = [...y];
    for (let j = 1; S.length < d; j++) {
      const counter = bytes(BigInt(j), 16);
      S.push(...aes(Uint8Array.from(y, (byte, k) => byte ^ (counter[k] as number))));
    }
    const yNum = S.slice(0, d).reduce((acc, byte) => (acc << 8n) + BigInt(byte), 0n);
    const m = i % 2 === 0 ? u : v;
    const M = R ** BigInt(m);
    if (!decrypt) {
      const c = (((num(A) + yNum) % M) + M) % M;
      [A, B] = [B, str(c, m)];
    } else {
      const c = (((num(B) - yNum) % M) + M) % M;
      [B, A] = [A, str(c, m)];
    }
  }
  return [...A, ...B];
}
