import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { addAccountToConfigText, AccountExistsError } from '../../src/config/accountsEditor.js';
import { parseConfig } from '../../src/config/loadConfig.js';

const account = {
  email: 'Alice@Example.com',
  passwordHash: '$scrypt$ln=4,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  apiKeyHash: '$sha256$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  roles: ['analyst', 'support'],
  enabled: true,
};

describe('addAccountToConfigText', () => {
  it('appends to the example file, keeping its comments', async () => {
    const text = await readFile('config/pgveil.example.yaml', 'utf8');
    const next = addAccountToConfigText(text, account);
    expect(next).toContain('# pgveil configuration — example');
    expect(next).toContain('# Default: 10000');
    const config = parseConfig(next, 'config/pgveil.yaml', { env: {} });
    expect(config.accounts).toEqual([{ ...account, email: 'alice@example.com' }]);
    const twice = addAccountToConfigText(next, { ...account, email: 'bob@example.com', roles: [] });
    expect(parseConfig(twice, 'x.yaml', { env: {} }).accounts.map((a) => a.email)).toEqual(['alice@example.com', 'bob@example.com']);
  });

  it('creates the accounts list when absent', () => {
    const next = addAccountToConfigText('api:\n  listen: { port: 1 }\n', account);
    expect(parseConfig(next, 'x.yaml', { env: {} }).accounts).toHaveLength(1);
    expect(parseConfig(addAccountToConfigText('', account), 'x.yaml', { env: {} }).accounts).toHaveLength(1);
  });

  it('refuses an email that exists (case-insensitively)', () => {
    const next = addAccountToConfigText('', account);
    expect(() => addAccountToConfigText(next, { ...account, email: 'ALICE@example.com' })).toThrow(AccountExistsError);
  });

  it('refuses a file that is not valid YAML', () => {
    expect(() => addAccountToConfigText('api: [\n', account)).toThrow('not valid YAML');
    expect(() => addAccountToConfigText('accounts: 5\n', account)).toThrow('must be a list');
  });
});
