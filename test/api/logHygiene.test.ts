import { expect, it } from 'vitest';
import { authHeaders, login, makeAccount, postJson, protect, startHarness } from './support/apiHarness.js';

/** Logs (pino, every level) never contain values, tokens, passwords or keys. */
it('logs no values, tokens, passwords or API keys, whatever happens', async () => {
  const lines: string[] = [];
  const alice = await makeAccount('alice@example.com');
  const h = await startHarness({ accounts: [alice], logLines: lines });
  try {
    const s = await login(h.url, alice);
    const secretValue = '4111 1111 1111 1111';
    const p = await protect(h.url, s, 'ccn', { id: 1, operation: 'protect', data: [secretValue], options: { scope: 'log-scope' } });
    await protect(h.url, s, 'ccn', { id: 1, operation: 'unprotect', data: p.body['result'], options: { scope: 'log-scope' } });
    await protect(h.url, s, 'ssn', { id: 1, operation: 'protect', data: ['not-an-ssn-VALUE'] });
    await postJson(h.url, '/api/ssn', '{"id":1,"operation":"protect","data":["broken-JSON-VALUE"', authHeaders(s));
    await postJson(h.url, '/auth/login', { email: alice.email, password: 'wrong-PASSWORD-value' }, { 'content-type': 'application/json' });
    await postJson(h.url, '/auth/login', { email: 'typed-password-in-email', password: 'x' }, { 'content-type': 'application/json' });
    await protect(h.url, { ...s, apiKey: 'pgv_WRONG-KEY-value' }, 'ssn', { id: 1, operation: 'protect', data: ['123-45-6789'] });

    const log = lines.join('');
    expect(lines.length).toBeGreaterThan(5);
    const secrets = [
      secretValue, '4111111111111111', ...(p.body['result'] as string[]), 'not-an-ssn-VALUE', 'broken-JSON-VALUE',
      alice.password, 'wrong-PASSWORD-value', 'typed-password-in-email', alice.apiKey, 'pgv_WRONG-KEY-value',
      s.jwt_token, s.svc_token, s.jwt_token.split('.')[2] ?? '', 'log-scope',
    ];
    for (const secret of secrets) expect(log, `log contains ${secret}`).not.toContain(secret);
  } finally {
    await h.close();
  }
});
