import { describe, expect, it } from 'vitest';
import { revocationsOnly } from '../../src/auth/accountRevocations.js';
import type { AccountConfig } from '../../src/config/configTypes.js';

const account = (email: string, roles: string[], extra: Partial<AccountConfig> = {}): AccountConfig =>
  ({ email, passwordHash: `pw-${email}`, apiKeyHash: `key-${email}`, roles, enabled: true, ...extra });

describe('revocationsOnly (what a refused accounts reload still puts in force)', () => {
  it('disables what the file disables or removes, rotates credentials, and grants nothing', () => {
    const inForce = [account('a@x', ['app']), account('b@x', ['app']), account('c@x', ['app']), account('d@x', ['app'], { enabled: false }), account('e@x', ['app'])];
    const next = [
      account('a@x', ['app'], { enabled: false }),
      account('c@x', ['app', 'analyst'], { passwordHash: 'new-pw' }),
      account('d@x', ['admin']),
      account('e@x', ['app', 'admin']),
      account('new@x', ['admin']),
    ];
    expect(revocationsOnly(inForce, next)).toEqual([
      account('a@x', ['app'], { enabled: false }),
      account('b@x', ['app'], { enabled: false }),
      account('c@x', ['app'], { passwordHash: 'new-pw' }),
      account('d@x', ['app'], { enabled: false }),
      account('e@x', ['app']),
    ]);
  });

  it('disables an account whose roles it changes other than by adding (app → analyst, or a role taken away)', () => {
    const inForce = [account('a@x', ['app']), account('b@x', ['app', 'support']), account('c@x', ['support'])];
    const next = [account('a@x', ['analyst']), account('b@x', ['support']), account('c@x', ['support', 'analyst'])];
    expect(revocationsOnly(inForce, next)).toEqual([
      account('a@x', ['app'], { enabled: false }),
      account('b@x', ['app', 'support'], { enabled: false }),
      account('c@x', ['support']),
    ]);
  });

  it('returns the accounts in force themselves when the file takes nothing away', () => {
    const inForce = [account('a@x', ['app'])];
    expect(revocationsOnly(inForce, [account('A@x', ['app', 'admin'], { passwordHash: 'pw-a@x', apiKeyHash: 'key-a@x' }), account('b@x', ['app'])])).toBe(inForce);
  });
});
