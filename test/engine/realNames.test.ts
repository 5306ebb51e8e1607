import { describe, expect, it } from 'vitest';
import { detectScript } from '../../src/engine/scripts/index.js';
import { createEngine } from '../../src/index.js';
import { REAL_NAMES } from '../fixtures/realNames.js';

const engine = createEngine({ masterKey: Buffer.alloc(32, 11) });
const codePoints = (s: string) => [...s].length;

/** A real person, city and address in every lang, through the engine, for tokenise and fpe. */
describe.each(REAL_NAMES)('$lang: $name, $city', ({ lang, name, city, address }) => {
  const samples = [['name', name], ['city', city], ['address', address]] as const;

  it.each(samples)('%s: tokenise keeps the script and round-trips', async (kind, value) => {
    const { result: [token] } = await engine.protect(kind, [value], { lang });
    expect(token).not.toBe(value);
    expect(token).toMatch(/^\S+( \S+)*$/u); // space-separated groups
    expect(detectScript(token!, lang)).toBe(detectScript(value, lang));
    expect((await engine.unprotect(kind, [token!], { lang })).result).toEqual([value]);
  });

  it.each(samples)('%s: fpe keeps script and length and round-trips', async (kind, value) => {
    const { result: [out] } = await engine.protect(kind, [value], { method: 'fpe', lang });
    expect(out).not.toBe(value);
    expect(codePoints(out!)).toBe(codePoints(value));
    expect(out!.normalize('NFC')).toBe(out);
    expect(detectScript(out!, lang)).toBe(detectScript(value, lang));
    expect((await engine.unprotect(kind, [out!], { method: 'fpe', lang })).result).toEqual([value]);
  });
});
