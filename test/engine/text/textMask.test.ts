import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressKind } from '../../../src/engine/kinds/address.js';
import { cityKind } from '../../../src/engine/kinds/city.js';
import { nameKind } from '../../../src/engine/kinds/name.js';
import { textKind } from '../../../src/engine/kinds/text.js';
import { MASK_CHAR } from '../../../src/engine/methods/redact.js';
import { REAL_NAMES } from '../../fixtures/realNames.js';

describe('text mask', () => {
  it.each([
    ['Ada Lovelace', 'A** L*******'],
    ['Jean-Luc Picard', 'J***-L** P*****'],
    ["Sinéad O'Connor", "S***** O'C*****"],
    ['221B Baker Street, London NW1 6XE', '**** B**** S*****, L***** N** ***'],
    ['Calle de Alcalá 42, 1ª planta', 'C**** d* A***** **, ** p*****'],
    ['Пётр Ильич Чайковский', 'П*** И**** Ч*********'],
    ['세종대왕', '세***'],
    ['北京市东城区', '北*****'],
    ['スズキ イチロー', 'ス** イ***'],
  ])('%s → %s', (value, masked) => {
    expect(nameKind.mask(value, 'en')).toBe(masked);
  });

  it('keeps the marks of the first letter and drops those of hidden letters', () => {
    expect(nameKind.mask('महात्मा गांधी', 'hi')).toBe('म*** गां*');
    expect(cityKind.mask('เชียงใหม่', 'th')).toBe('เ******');
    expect(nameKind.mask('نَجِيب مَحْفُوظ', 'ar')).toBe('نَ*** مَ****');
    // The ZWJ inside ශ්‍රී joins ශ to the hidden ර, so it goes; a ZWJ that ends the word stays.
    expect(cityKind.mask('ශ්‍රී ජයවර්ධනපුර', 'si')).toBe('ශ්* ජ*******');
    expect(addressKind.mask('ന്‍ കണ്ണന്‍', 'ml')).toBe('ന്‍ ക***');
  });

  it('hides every digit and shows nothing of a word that starts with one', () => {
    expect(addressKind.mask('12b Main St', 'en')).toBe('*** M*** S*');
    expect(addressKind.mask('৬ দ্বারকানাথ', 'bn')).toBe('* দ্*****');
  });

  it('masks 7-bit text (its own fast path) as the Unicode path does', () => {
    // A trailing no-break space is neither letter, mark nor joiner: it ends the word and stays, and
    // it sends the value down the Unicode path.
    const ascii = fc.string({ unit: fc.constantFrom(...'aZq09 -.,\'/\t\n!*_@#'), maxLength: 64 });
    fc.assert(fc.property(fc.oneof(ascii, fc.string({ unit: 'binary-ascii', maxLength: 64 })), (value) => {
      expect(`${nameKind.mask(value, 'en')}\u00a0`).toBe(nameKind.mask(`${value}\u00a0`, 'en'));
    }), { numRuns: 500 });
  });

  it('redacts 7-bit text (its own fast path) as the Unicode path does', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary-ascii', maxLength: 64 }), (value) => {
      expect(`${textKind.redact(value, 'en')}\u00a0`).toBe(textKind.redact(`${value}\u00a0`, 'en'));
    }), { numRuns: 300 });
  });

  it('normalises to NFC first', () => {
    expect(cityKind.mask('Zürich'.normalize('NFD'), 'de')).toBe('Z*****');
    expect(cityKind.mask('Émile'.normalize('NFD'), 'fr')).toBe('É****');
  });

  it('never shows more than one letter per word on the real samples', () => {
    for (const sample of REAL_NAMES) {
      for (const value of [sample.name, sample.city, sample.address]) {
        const masked = textKind.mask(value, sample.lang);
        for (const word of masked.split(/[^\p{L}\p{N}\p{M}*\u200c\u200d]+/u)) {
          expect([...word].filter((ch) => /\p{L}|\p{N}/u.test(ch)).length).toBeLessThanOrEqual(1);
        }
        expect(masked).toContain(MASK_CHAR);
      }
    }
  });
});

describe('text redact', () => {
  it('keeps only the layout', () => {
    expect(nameKind.redact('Ada Lovelace', 'en')).toBe('*** ********');
    expect(addressKind.redact('221B Baker Street, London', 'en')).toBe('**** ***** ******, ******');
    expect(nameKind.redact('महात्मा गांधी', 'hi')).toBe('**** **');
    expect(cityKind.redact('ශ්‍රී ජය', 'si')).toBe('*\u200d* **');
  });
});

describe('text isValid', () => {
  it('wants a non-empty string without control characters or lone surrogates', () => {
    for (const kind of [nameKind, cityKind, addressKind, textKind]) {
      expect(kind.isValid('Ada', 'en')).toBe(true);
      expect(kind.isValid('...', 'en')).toBe(true);
      expect(kind.isValid('Αθήνα', 'en')).toBe(true); // valid text; only fpe cannot protect it
      expect(kind.isValid('', 'en')).toBe(false);
      expect(kind.isValid('a\u0000b', 'en')).toBe(false);
      expect(kind.isValid('a\u007fb', 'en')).toBe(false);
      expect(kind.isValid('a\ud800b', 'en')).toBe(false);
      expect(kind.isValid('a\udc00', 'en')).toBe(false);
      expect(kind.isValid('😀 ok', 'en')).toBe(true);
      expect(kind.hasLang).toBe(true);
    }
    expect(nameKind.isValid('a\nb', 'en')).toBe(false);
    expect(addressKind.isValid('a\r\nb\tc', 'en')).toBe(true);
  });

  it('names each handler after its kind', () => {
    expect([addressKind.kind, textKind.kind, nameKind.kind, cityKind.kind]).toEqual(['address', 'text', 'name', 'city']);
  });
});
