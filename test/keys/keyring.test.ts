import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Keyring } from '../../src/keys/keyring.js';
import { generateMasterKey, parseMasterKey } from '../../src/keys/masterKey.js';

const keyA = Buffer.alloc(32, 0xa5);

describe('master key', () => {
  it('accepts 32 bytes as a Buffer or base64, and nothing else', () => {
    expect(parseMasterKey(keyA)).toEqual(keyA);
    expect(parseMasterKey(keyA.toString('base64'))).toEqual(keyA);
    expect(parseMasterKey(keyA.toString('base64url'))).toEqual(keyA);
    expect(parseMasterKey(generateMasterKey())).toHaveLength(32);
    const short = Buffer.alloc(16, 1).toString('base64');
    expect(() => parseMasterKey(short)).toThrow(/32 bytes; got 16/);
    try { parseMasterKey(short); } catch (e) { expect(String(e)).not.toContain(short); }
    expect(() => parseMasterKey('not base64 at all!')).toThrow(/32 bytes/);
  });
});

describe('Keyring', () => {
  const ring = new Keyring([{ version: 1, key: keyA }, { version: 2, key: Buffer.alloc(32, 2) }], 2);

  it('derives one stable subkey per (method, kind, scope, version)', () => {
    const base = ring.subkey('fpe', 'ccn', 'billing', 1);
    expect(base).toHaveLength(32);
    expect(new Keyring([{ version: 1, key: keyA }]).subkey('fpe', 'ccn', 'billing', 1)).toEqual(base);
    const others = [
      ring.subkey('tokenise', 'ccn', 'billing', 1),
      ring.subkey('fpe', 'ssn', 'billing', 1),
      ring.subkey('fpe', 'ccn', 'crm', 1),
      ring.subkey('fpe', 'ccn', 'billing', 2),
      ring.subkey('fpe', 'ccnb', 'illing', 1), // fields are length-prefixed: no ambiguity
    ];
    for (const k of others) expect(k.equals(base)).toBe(false);
    expect(ring.subkey('fpe', 'ccn', 'billing').equals(ring.subkey('fpe', 'ccn', 'billing', 2))).toBe(true);
  });

  it('never shows key material when inspected or serialised', () => {
    const shown = inspect(ring, { depth: 5, showHidden: true }) + JSON.stringify({ ring });
    expect(shown).not.toContain(keyA.toString('hex'));
    expect(shown).not.toContain(keyA.toString('base64'));
    expect(shown).not.toMatch(/a5, a5|165, 165/);
  });

  it('refuses bad versions', () => {
    expect(() => new Keyring([])).toThrow();
    expect(() => new Keyring([{ version: 0, key: keyA }])).toThrow(/1 to 31/);
    expect(() => new Keyring([{ version: 1, key: keyA }], 3)).toThrow(/no key/);
    expect(() => ring.subkey('fpe', 'ccn', 's', 9)).toThrow(/no key for version 9/);
  });
});
