/** PostgreSQL's uuid input forms, read into the canonical form before protection. */
import { describe, expect, it } from 'vitest';
import { canonicalUuidText } from '../../../src/proxy/enforcement/valueCodecs/uuidText.js';
import { DEFAULT_DATE_STYLE as ISO } from '../../../src/proxy/enforcement/valueCodecs/dateStyle.js';
import { normaliseText } from '../../../src/proxy/enforcement/writePath/normaliseText.js';
import { TYPE_OIDS } from '../../../src/proxy/enforcement/valueCodecs/valueCodecs.js';

const CANONICAL = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';

describe('uuid input forms', () => {
  it.each([
    CANONICAL,
    'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11',
    'a0EEbc99-9c0B-4ef8-bB6d-6bb9bd380A11',
    '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}',
    'a0eebc999c0b4ef8bb6d6bb9bd380a11',
    'A0EEBC999C0B4EF8BB6D6BB9BD380A11',
    'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11',
    '{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}',
    '{a0eebc999c0b4ef8bb6d6bb9bd380a11}',
    'a0eebc99-9c0b4ef8bb6d6bb9bd380a11',
  ])('reads %s as the canonical form', (text) => {
    expect(canonicalUuidText(text)).toBe(CANONICAL);
  });

  it.each([
    ['empty', ''],
    ['31 digits', 'a0eebc999c0b4ef8bb6d6bb9bd380a1'],
    ['33 digits', 'a0eebc999c0b4ef8bb6d6bb9bd380a111'],
    ['a hyphen after the last group', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-'],
    ['a leading hyphen', '-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
    ['two hyphens in a row', 'a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11'],
    ['a hyphen inside a group of four', 'a0eeb-c99-9c0b-4ef8-bb6d-6bb9bd380a11'],
    ['an opening brace alone', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
    ['a closing brace alone', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'],
    ['a hyphen before the closing brace', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-}'],
    ['two opening braces', '{{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}}'],
    ['a non-hex digit', 'g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
    ['a leading space', ' a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
    ['a trailing space', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 '],
    ['a URN prefix', 'urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
    ['full-width digits', 'ａ0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
    ['parentheses', '(a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11)'],
  ])('refuses %s', (_label, text) => {
    expect(canonicalUuidText(text)).toBeUndefined();
  });

  it('reads a long hostile input in linear time', () => {
    const hostile = `{${'a-'.repeat(200_000)}`;
    const started = performance.now();
    expect(canonicalUuidText(hostile)).toBeUndefined();
    expect(canonicalUuidText('-'.repeat(400_000))).toBeUndefined();
    expect(canonicalUuidText(`${'a0ee-'.repeat(8)}${'0'.repeat(400_000)}`)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('normalises a uuid column’s text only; a text column keeps what was sent', () => {
    expect(normaliseText(TYPE_OIDS.uuid, '{A0EEBC999C0B4EF8BB6D6BB9BD380A11}', ISO)).toBe(CANONICAL);
    expect(normaliseText(TYPE_OIDS.uuid, 'not a uuid', ISO)).toBe('not a uuid');
    expect(normaliseText(TYPE_OIDS.text, 'a0eebc999c0b4ef8bb6d6bb9bd380a11', ISO)).toBe('a0eebc999c0b4ef8bb6d6bb9bd380a11');
  });
});
