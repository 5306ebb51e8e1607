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

  const existing = ['    - email: a@x.io', `      passwordHash: '${account.passwordHash}'`, `      apiKeyHash: '${account.apiKeyHash}'`,
    '      roles: [app]   # app role', '      enabled: true'];
  const added = ['    - email: alice@example.com', `      passwordHash: ${account.passwordHash}`, `      apiKeyHash: ${account.apiKeyHash}`,
    '      roles: [analyst, support]', '      enabled: true'];

  it('changes no byte of the file besides the lines it adds', () => {
    const head = ['# top', 'api:', '    listen:   { port: 8080 }   # the port', '', '    # blank line above',
      '    limits:', '        maxElements: 10', '', 'accounts:', '    # first', ...existing];
    const tail = ['', '# trailing comment', '    # indented comment', ''];
    const next = addAccountToConfigText([...head, ...tail].join('\n'), account);
    expect(next).toBe([...head, ...added, ...tail].join('\n'));
    expect(parseConfig(next, 'x.yaml', { env: {} }).accounts.map((a) => a.email)).toEqual(['a@x.io', 'alice@example.com']);
  });

  it('turns an empty list into a block list and leaves the rest of the example file as it was', async () => {
    const example = await readFile('config/pgveil.example.yaml', 'utf8');
    const grown = addAccountToConfigText(example, account);
    const lines = grown.split('\n');
    const at = lines.indexOf('accounts:');
    expect(lines.slice(at + 1, at + 6)).toEqual(added.map((line) => line.slice(2)));
    expect([...lines.slice(0, at), 'accounts: []', ...lines.slice(at + 6)].join('\n')).toBe(example);
    for (const empty of ['accounts:\n', 'accounts: ~ # none yet\n', 'accounts: []\n# end\n']) {
      const next = addAccountToConfigText(empty, account);
      expect(parseConfig(next, 'x.yaml', { env: {} }).accounts.map((a) => a.email)).toEqual(['alice@example.com']);
    }
    expect(addAccountToConfigText('accounts: ~ # none yet\n', account).split('\n')[0]).toMatch(/^accounts: +# none yet$/);
  });

  it('keeps a file without a final newline', () => {
    const text = ['accounts:', ...existing].join('\n');
    const next = addAccountToConfigText(text, account);
    expect(next).toBe([text, ...added, ''].join('\n'));
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
