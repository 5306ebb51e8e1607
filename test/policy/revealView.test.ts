import { describe, expect, it } from 'vitest';
import { parsePolicies } from '../../src/policy/policyParser.js';
import type { ColumnPolicy } from '../../src/policy/policyTypes.js';
import { maskOptions, readAction, readActionFor, resolveView } from '../../src/policy/revealView.js';

const set = parsePolicies(`
columns:
  public.t.ssn:
    kind: ssn
    method: fpe
    scope: s
    reveal: { app: plaintext, support: mask, auditor: token, intern: redact }
  public.t.phone:
    kind: phone
    method: passthrough
    reveal: { app: plaintext, support: mask, "*": redact }
  public.t.open:
    kind: phone
    method: passthrough
    reveal: { support: mask }
  public.t.card:
    kind: ccn
    method: mask
    reveal: { support: mask, intern: redact }
  public.t.notes:
    kind: text
    method: redact
    lang: fr
  public.t.name:
    kind: name
    lang: ja
    reveal: { "*": mask, app: plaintext, intern: redact }
`, 'policies.yaml');

function policy(column: string): ColumnPolicy {
  const p = set.get('public', 't', column);
  if (!p) throw new Error(`no policy for ${column}`);
  return p;
}

describe('resolveView', () => {
  it('gives each listed role its view, and token to roles not listed and to no roles', () => {
    const ssn = policy('ssn');
    expect(resolveView(ssn, ['app'])).toBe('plaintext');
    expect(resolveView(ssn, ['support'])).toBe('mask');
    expect(resolveView(ssn, ['auditor'])).toBe('token');
    expect(resolveView(ssn, ['intern'])).toBe('redact');
    expect(resolveView(ssn, ['analyst'])).toBe('token');
    expect(resolveView(ssn, [])).toBe('token');
  });

  it('with several roles, the most revealing view wins: plaintext > mask > token > redact', () => {
    const ssn = policy('ssn');
    expect(resolveView(ssn, ['intern', 'support'])).toBe('mask');
    expect(resolveView(ssn, ['support', 'app', 'intern'])).toBe('plaintext');
    expect(resolveView(ssn, ['intern', 'auditor'])).toBe('token');
    expect(resolveView(ssn, ['intern', 'analyst'])).toBe('token'); // analyst is not listed: token
    expect(resolveView(ssn, ['intern'])).toBe('redact');
  });

  it('"*" is the view of every role not listed', () => {
    const name = policy('name');
    expect(resolveView(name, [])).toBe('mask');
    expect(resolveView(name, ['analyst'])).toBe('mask');
    expect(resolveView(name, ['intern'])).toBe('redact');
    expect(resolveView(name, ['intern', 'analyst'])).toBe('mask');
    expect(resolveView(name, ['app'])).toBe('plaintext');
  });

  it('ranks what a view shows: on passthrough, token (as stored) is plaintext', () => {
    const phone = policy('phone');
    expect(resolveView(phone, ['support'])).toBe('mask');
    expect(resolveView(phone, ['analyst'])).toBe('redact');
    const open = policy('open');
    expect(resolveView(open, ['analyst'])).toBe('plaintext');
    expect(resolveView(open, ['support', 'analyst'])).toBe('plaintext');
  });

  it('on a mask column, mask is what is stored', () => {
    const card = policy('card');
    expect(resolveView(card, ['support'])).toBe('token');
    expect(resolveView(card, ['intern'])).toBe('redact');
    expect(resolveView(card, ['intern', 'support'])).toBe('token');
  });
});

describe('readAction: what the proxy does to a stored value', () => {
  it('tokenise/fpe: unprotect for plaintext, unprotect then mask for mask', () => {
    const ssn = policy('ssn');
    expect(readActionFor(ssn, ['app'])).toBe('unprotect');
    expect(readActionFor(ssn, ['support'])).toBe('unprotect-then-mask');
    expect(readActionFor(ssn, ['auditor'])).toBe('pass');
    expect(readActionFor(ssn, ['intern'])).toBe('null');
    expect(readActionFor(policy('name'), ['analyst'])).toBe('unprotect-then-mask');
  });

  it('passthrough: the stored value is the plaintext, masked on read for mask', () => {
    const phone = policy('phone');
    expect(readActionFor(phone, ['app'])).toBe('pass');
    expect(readActionFor(phone, ['support'])).toBe('mask');
    expect(readActionFor(phone, [])).toBe('null');
  });

  it('one-way methods: the stored value or NULL, never an unprotect', () => {
    const card = policy('card');
    expect(readActionFor(card, ['support'])).toBe('pass');
    expect(readActionFor(card, ['intern'])).toBe('null');
    expect(readAction(card, 'plaintext')).toBe('pass');
    expect(readAction(policy('notes'), 'mask')).toBe('pass');
    expect(readActionFor(policy('notes'), ['anyone'])).toBe('pass');
  });

  it('maskOptions keep the column lang', () => {
    expect(maskOptions(policy('name'))).toEqual({ method: 'mask', scope: 'no-scope', noise: 0, lang: 'ja' });
    expect(maskOptions(policy('ssn'))).toEqual({ method: 'mask', scope: 's', noise: 0 });
  });
});
