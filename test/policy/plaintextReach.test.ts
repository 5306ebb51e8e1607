import { describe, expect, it } from 'vitest';
import { parsePolicies } from '../../src/policy/policyParser.js';
import { columnsWithoutPlaintext, lacksPlaintextSomewhere } from '../../src/policy/plaintextReach.js';

const set = parsePolicies(`
columns:
  public.t.ssn:
    kind: ssn
    method: fpe
    scope: s
    reveal: { app: plaintext, support: mask }
  public.t.phone:
    kind: phone
    method: passthrough
    reveal: { app: plaintext, support: plaintext, "*": mask }
  public.t.card:
    kind: ccn
    method: mask
    reveal: { support: mask }
`, 'policies.yaml');

describe('which accounts lack plaintext somewhere', () => {
  it('an account that sees every recoverable column in plaintext lacks nothing', () => {
    expect(lacksPlaintextSomewhere(set, ['app'])).toBe(false);
    expect(columnsWithoutPlaintext(set, ['app'])).toEqual([]);
  });

  it('a column masked at rest counts for nobody: there is no plaintext to hide', () => {
    expect(columnsWithoutPlaintext(set, ['app']).map((c) => c.column)).not.toContain('card');
  });

  it('masked, tokenised and unlisted roles lack plaintext, column by column', () => {
    expect(columnsWithoutPlaintext(set, ['support']).map((c) => c.column)).toEqual(['ssn']);
    expect(columnsWithoutPlaintext(set, ['analyst']).map((c) => c.column)).toEqual(['ssn', 'phone']);
    expect(columnsWithoutPlaintext(set, []).map((c) => c.column)).toEqual(['ssn', 'phone']);
    expect(lacksPlaintextSomewhere(set, ['support'])).toBe(true);
  });

  it('several roles combine: the most revealing view of each column counts', () => {
    expect(lacksPlaintextSomewhere(set, ['support', 'app'])).toBe(false);
  });

  it('a file with no columns restricts nobody', () => {
    expect(lacksPlaintextSomewhere(parsePolicies('columns: {}\n', 'empty.yaml'), [])).toBe(false);
  });
});
