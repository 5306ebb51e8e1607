/** When a reload leaves a column's policy as it was: what decides whether results in flight may go on. */
import { describe, expect, it } from 'vitest';
import { parsePolicies, type ColumnPolicy } from '../../../src/policy/index.js';
import { sameColumnPolicy } from '../../../src/proxy/enforcement/readPath/resultPlan.js';

const FILE = `
columns:
  public.customers.ssn: { kind: ssn, method: fpe, scope: people, reveal: { app: plaintext, support: mask } }
  public.customers.email: { kind: email, method: tokenise, scope: people, reveal: { app: plaintext } }
`;

function column(text: string, key: string, file = 'policies.yaml'): ColumnPolicy {
  const found = parsePolicies(text, file).columns.find((policy) => policy.key === key);
  if (found === undefined) throw new Error(`no policy for ${key}`);
  return found;
}

describe('sameColumnPolicy', () => {
  it('takes a policy read again, from another file or line, as the same', () => {
    const before = column(FILE, 'public.customers.ssn');
    const after = column(`\n\n${FILE}`, 'public.customers.ssn', 'moved.yaml');
    expect(after).not.toBe(before);
    expect(after.source).not.toEqual(before.source);
    expect(sameColumnPolicy(before, after)).toBe(true);
  });

  it.each([
    ['its scope', FILE.replace('scope: people, reveal: { app: plaintext, support', 'scope: staff, reveal: { app: plaintext, support')],
    ['its method', FILE.replace('kind: ssn, method: fpe', 'kind: ssn, method: tokenise')],
    ['what a role sees', FILE.replace('support: mask', 'support: plaintext')],
    ['a role added', FILE.replace('support: mask }', 'support: mask, analyst: mask }')],
    ['the order of its roles', FILE.replace('{ app: plaintext, support: mask }', '{ support: mask, app: plaintext }')],
  ])('takes a change of %s as a change', (_, changed) => {
    expect(sameColumnPolicy(column(FILE, 'public.customers.ssn'), column(changed, 'public.customers.ssn'))).toBe(false);
  });

  it('counts a field of a kind it cannot compare as different, unless it is the same object', () => {
    const policy = column(FILE, 'public.customers.ssn');
    const shared = new Set(['a']);
    const withField = (value: unknown): ColumnPolicy => ({ ...policy, engineOptions: { ...policy.engineOptions, extra: value } as ColumnPolicy['engineOptions'] });
    // JSON would write both Sets, and both byte arrays, alike.
    expect(sameColumnPolicy(withField(new Set(['a'])), withField(new Set(['b'])))).toBe(false);
    expect(sameColumnPolicy(withField(new Set(['a'])), withField(new Set(['a'])))).toBe(false);
    expect(sameColumnPolicy(withField(Uint8Array.of(1)), withField(Uint8Array.of(2)))).toBe(false);
    expect(sameColumnPolicy(withField(shared), withField(shared))).toBe(true);
    expect(sameColumnPolicy(withField(undefined), policy)).toBe(true); // a key set to undefined is an absent one
    expect(sameColumnPolicy(withField(['x', 1]), withField(['x', 1]))).toBe(true);
    expect(sameColumnPolicy(withField(['x', 1]), withField(['x', 2]))).toBe(false);
  });
});
