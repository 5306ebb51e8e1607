import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/configError.js';
import { loadConfig, parseConfig } from '../../src/config/loadConfig.js';

const HASH = '$scrypt$ln=4,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const KEYHASH = '$sha256$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

function errorOf(text: string, env: Record<string, string> = {}): ConfigError {
  try {
    parseConfig(text, 'conf/pgveil.yaml', { env });
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('the example configuration', () => {
  it('is valid and gives every default', async () => {
    const config = await loadConfig('config/pgveil.example.yaml', { env: {} });
    expect(config.api).toEqual({
      enabled: true,
      listen: { host: '127.0.0.1', port: 8080 },
      limits: { maxElements: 10_000, maxElementBytes: 4096, maxBodyBytes: 10 * 1024 * 1024, requestTimeoutSeconds: 60, maxConnections: 1000 },
      loginRateLimit: { maxFailuresPerAccount: 5, maxFailuresPerClient: 20, windowSeconds: 900 },
      grants: [],
    });
    expect(config.keys).toEqual({ masterKeyEnv: 'PGVEIL_MASTER_KEY', keyVersion: 1, previousKeys: [], masterKeyFile: resolve('.pgveil/master.key') });
    expect(config.accounts).toEqual([]);
    expect(config.logging).toEqual({ level: 'info' });
    expect(config.proxy).toBeUndefined();
  });

  it('with its proxy section uncommented, gives the proxy defaults', async () => {
    const text = await readFile('config/pgveil.example.yaml', 'utf8');
    const start = text.indexOf('# proxy:');
    const proxy = text.slice(start).split('\n').map((l) => l.replace(/^# ?/, '')).join('\n');
    const config = parseConfig(text.slice(0, start) + proxy, 'config/pgveil.yaml', { env: {} });
    expect(config.proxy).toEqual({
      listen: { host: '127.0.0.1', port: 6432 },
      tls: { mode: 'allow' },
      allowCleartextFromLoopback: false,
      maxClientConnections: 1000,
      maxPendingLogins: 100,
      loginTimeoutSeconds: 10,
      idleTimeoutSeconds: 0,
      nativeSocketIo: true,
      maxProtectedValueBytes: 4096,
      upstream: { host: '127.0.0.1', port: 5432, user: 'pgveil', sslmode: 'prefer' },
      databases: {},
      upstreamRoles: {},
      workers: 1,
      peerId: 0,
      peers: [],
    });
  });

  it('an empty file is all defaults', () => {
    expect(parseConfig('', 'x.yaml', { env: {} }).api.listen.port).toBe(8080);
  });
});

describe('a full configuration', () => {
  const text = `
api:
  listen: { host: 0.0.0.0, port: 9000 }
keys:
  masterKeyFile: keys/current.key
  keyVersion: 3
  previousKeys:
    - { version: 1, file: keys/v1.key }
    - { version: 2, env: OLD_KEY }
accounts:
  - email: Alice@Example.com
    passwordHash: "${HASH}"
    apiKeyHash: "${KEYHASH}"
    roles: [analyst, support]
  - email: bob@example.com
    passwordHash: "${HASH}"
    apiKeyHash: "${KEYHASH}"
    enabled: false
logging: { level: debug }
policies: policies.yaml
proxy:
  listen: { port: 7432 }
  tls: { mode: require, cert: tls/a.crt, key: tls/a.key }
  allowCleartextFromLoopback: true
  maxClientConnections: 50
  idleTimeoutSeconds: 300
  nativeSocketIo: false
  upstream: { host: db.internal, port: 5433, user: app, password: "", database: appdb, sslmode: verify-full, ca: tls/ca.crt }
  databases: { app: app_production }
`;
  it('reads every section, resolving paths against the file', () => {
    const c = parseConfig(text, 'conf/pgveil.yaml', { env: {} });
    const dir = resolve('conf');
    expect(c.file).toBe(resolve('conf/pgveil.yaml'));
    expect(c.api.listen).toEqual({ host: '0.0.0.0', port: 9000 });
    expect(c.keys).toEqual({
      masterKeyFile: join(dir, 'keys/current.key'), masterKeyEnv: 'PGVEIL_MASTER_KEY', keyVersion: 3,
      previousKeys: [{ version: 1, file: join(dir, 'keys/v1.key') }, { version: 2, env: 'OLD_KEY' }],
    });
    expect(c.accounts).toEqual([
      { email: 'alice@example.com', passwordHash: HASH, apiKeyHash: KEYHASH, roles: ['analyst', 'support'], enabled: true },
      { email: 'bob@example.com', passwordHash: HASH, apiKeyHash: KEYHASH, roles: [], enabled: false },
    ]);
    expect(c.logging.level).toBe('debug');
    expect(c.policies).toBe(join(dir, 'policies.yaml'));
    expect(c.proxy).toEqual({
      listen: { host: '127.0.0.1', port: 7432 },
      tls: { mode: 'require', cert: join(dir, 'tls/a.crt'), key: join(dir, 'tls/a.key') },
      allowCleartextFromLoopback: true,
      maxClientConnections: 50,
      maxPendingLogins: 100,
      loginTimeoutSeconds: 10,
      idleTimeoutSeconds: 300,
      nativeSocketIo: false,
      maxProtectedValueBytes: 4096,
      upstream: { host: 'db.internal', port: 5433, user: 'app', password: '', database: 'appdb', sslmode: 'verify-full', ca: join(dir, 'tls/ca.crt') },
      databases: { app: 'app_production' },
      upstreamRoles: {},
      workers: 1,
      peerId: 0,
      peers: [],
    });
  });

  it('lets the environment override ports and secrets', () => {
    const c = parseConfig(text, 'conf/pgveil.yaml', {
      env: { PGVEIL_API_PORT: '9100', PGVEIL_API_HOST: '127.0.0.2', PGVEIL_PROXY_PORT: '7500', PGVEIL_UPSTREAM_PASSWORD: 's3cret', PGVEIL_LOG_LEVEL: 'warn', PGVEIL_MASTER_KEY_FILE: 'other.key' },
    });
    expect(c.api.listen).toEqual({ host: '127.0.0.2', port: 9100 });
    expect(c.proxy?.listen.port).toBe(7500);
    expect(c.proxy?.upstream.password).toBe('s3cret');
    expect(c.logging.level).toBe('warn');
    expect(c.keys.masterKeyFile).toBe(resolve('other.key'));
  });

  it('does not invent a proxy section from proxy variables', () => {
    expect(parseConfig('', 'x.yaml', { env: { PGVEIL_PROXY_PORT: '7000' } }).proxy).toBeUndefined();
  });
});

describe('mistakes', () => {
  it('give file:line:column, the key path, what is wrong and the valid choices', () => {
    const err = errorOf('api:\n  listen:\n    port: 99999\nproxy:\n  tls:\n    mode: requir\n  upstream: { user: u }\n');
    expect(err.message).toBe([
      'conf/pgveil.yaml:3:11: api.listen.port: must be an integer from 0 to 65535',
      'conf/pgveil.yaml:6:11: proxy.tls.mode: must be one of: disable, allow, require',
    ].join('\n'));
    expect(err.issues[1]).toMatchObject({ file: 'conf/pgveil.yaml', line: 6, column: 11, path: 'proxy.tls.mode' });
  });

  it('report unknown settings at their key, with the valid ones', () => {
    const err = errorOf('api:\n  limts: {}\nloging: {}\n');
    expect(err.message).toContain('conf/pgveil.yaml:2:3: api.limts: unknown setting; valid settings here: enabled, listen, limits, loginRateLimit');
    expect(err.message).toContain('conf/pgveil.yaml:3:1: loging: unknown setting; valid settings here: api, keys, accounts, logging, audit, proxy, policies');
  });

  it.each([
    ['a string port', 'api:\n  listen:\n    port: "80"\n', 'api.listen.port: must be an integer'],
    ['a log level', 'logging:\n  level: verbose\n', 'logging.level: must be one of: fatal, error, warn, info, debug, trace, silent'],
    ['an upstream sslmode', 'proxy:\n  upstream: { user: u, sslmode: on }\n', 'proxy.upstream.sslmode: must be one of: disable, prefer, require, verify-full'],
    ['a missing upstream', 'proxy:\n  listen: { port: 1 }\n', 'proxy.upstream: is required'],
    ['a cert without key', 'proxy:\n  tls: { cert: a.crt }\n  upstream: { user: u }\n', 'proxy.tls: give both cert and key'],
    ['a boolean as text', 'proxy:\n  allowCleartextFromLoopback: "yes"\n  upstream: { user: u }\n', 'must be true or false'],
    ['a database map value', 'proxy:\n  upstream: { user: u }\n  databases: { app: 5 }\n', 'proxy.databases.app: must be the name of an upstream database'],
    ['a key version', 'keys:\n  keyVersion: 40\n', 'keys.keyVersion: must be an integer from 1 to 31'],
    ['a previous key with both sources', 'keys:\n  previousKeys:\n    - { version: 2, file: a, env: B }\n', 'keys.previousKeys[0]: needs exactly one of: file, env'],
    ['a repeated key version', 'keys:\n  previousKeys:\n    - { version: 1, env: B }\n', 'key version 1 is given more than once'],
    ['an env name', 'keys:\n  masterKeyEnv: "MY KEY"\n', 'keys.masterKeyEnv: must be an environment variable name'],
    ['accounts not a list', 'accounts: {}\n', 'accounts: must be a list'],
    ['an email', `accounts:\n  - { email: nope, passwordHash: "${HASH}", apiKeyHash: "${KEYHASH}" }\n`, 'accounts[0].email: must be an email address'],
    ['a plaintext password', `accounts:\n  - { email: a@b.c, passwordHash: hunter2, apiKeyHash: "${KEYHASH}" }\n`, 'accounts[0].passwordHash: must be a scrypt hash'],
    ['an api key hash', `accounts:\n  - { email: a@b.c, passwordHash: "${HASH}", apiKeyHash: pgv_plain }\n`, 'accounts[0].apiKeyHash: must be a $sha256$ hash'],
    ['a missing hash', 'accounts:\n  - { email: a@b.c }\n', 'accounts[0].passwordHash: is required'],
    ['a role', `accounts:\n  - { email: a@b.c, passwordHash: "${HASH}", apiKeyHash: "${KEYHASH}", roles: ["two words"] }\n`, 'accounts[0].roles[0]: must be a role name'],
    ['a duplicate email', `accounts:\n  - { email: a@b.c, passwordHash: "${HASH}", apiKeyHash: "${KEYHASH}" }\n  - { email: A@B.C, passwordHash: "${HASH}", apiKeyHash: "${KEYHASH}" }\n`, 'accounts[1].email: this email is already used'],
    ['a grant kind', 'api:\n  grants:\n    - { roles: [ingest], kinds: [mail], scopes: "*", operations: [protect] }\n', 'api.grants[0].kinds[0]: must be one of the kinds'],
    ['a grant operation', 'api:\n  grants:\n    - { roles: [ingest], kinds: "*", scopes: [s], operations: [read] }\n', 'api.grants[0].operations[0]: must be one of the operations'],
    ['a grant to every role', 'api:\n  grants:\n    - { roles: "*", kinds: "*", scopes: "*", operations: [protect] }\n', 'api.grants[0].roles: must be a list'],
    ['a grant without scopes', 'api:\n  grants:\n    - { roles: [a], kinds: "*", operations: [protect] }\n', 'api.grants[0].scopes: is required'],
    ['an upstream role without user', 'proxy:\n  upstream: { user: u }\n  upstreamRoles: { support: { password: x } }\n', 'proxy.upstreamRoles.support.user: is required'],
    ['an upstream role with two passwords', 'proxy:\n  upstream: { user: u }\n  upstreamRoles: { support: { user: s, password: x, passwordEnv: X } }\n', 'give password or passwordEnv, not both'],
    ['an account mapped to two upstream logins', `accounts:\n  - { email: a@b.c, passwordHash: "${HASH}", apiKeyHash: "${KEYHASH}", roles: [app, support] }\nproxy:\n  upstream: { user: u }\n  upstreamRoles: { app: { user: x }, support: { user: y } }\n`, 'accounts[0].roles: the roles of a@b.c map to different upstream logins'],
    ['a worker count', 'proxy:\n  upstream: { user: u }\n  workers: 0\n', 'proxy.workers: must be an integer from 1 to 128'],
    ['a worker word', 'proxy:\n  upstream: { user: u }\n  workers: all\n', 'proxy.workers: must be auto or an integer from 1 to 128'],
    ['peers without peerId', 'proxy:\n  upstream: { user: u }\n  peers: [{ id: 2, host: b, port: 6432 }]\n', 'proxy.peerId: is required with proxy.peers'],
    ['a peer id out of range', 'proxy:\n  upstream: { user: u }\n  peerId: 64\n', 'proxy.peerId: must be an integer from 1 to 63'],
    ['a peer without port', 'proxy:\n  upstream: { user: u }\n  peerId: 1\n  peers: [{ id: 2, host: b }]\n', "proxy.peers[0].port: is required: the peer's proxy port"],
    ['a peer without id', 'proxy:\n  upstream: { user: u }\n  peerId: 1\n  peers: [{ host: b, port: 1 }]\n', "proxy.peers[0].id: is required"],
    ['two peers with one id', 'proxy:\n  upstream: { user: u }\n  peerId: 1\n  peers: [{ id: 2, host: b, port: 1 }, { id: 2, host: c, port: 1 }]\n', 'proxy.peers[1].id: this peer id is already used'],
    ['YAML syntax', 'api:\n  listen: [\n', 'YAML syntax'],
    ['a duplicate key', 'api: {}\napi: {}\n', 'Map keys must be unique'],
    ['a list at the top', '- a\n', 'must be a mapping of settings'],
  ])('%s', (_name, text, message) => {
    expect(errorOf(text).message).toContain(message);
  });

  it('read the audit destination', () => {
    expect(parseConfig('', 'conf/pgveil.yaml', { env: {} }).audit).toEqual({ destination: 'stdout' });
    expect(parseConfig('audit:\n  destination: file\n  file: logs/audit.log\n', 'conf/pgveil.yaml', { env: {} }).audit)
      .toEqual({ destination: 'file', file: resolve('conf/logs/audit.log') });
    expect(() => parseConfig('audit:\n  destination: file\n', 'conf/pgveil.yaml', { env: {} })).toThrow('audit.file: is required');
  });

  it('read proxy.workers and the peers', () => {
    const config = parseConfig('proxy:\n  upstream: { user: u }\n  workers: auto\n  peerId: 1\n  peers:\n    - { id: 1, host: a, port: 6432 }\n    - { id: 2, host: b, port: 6433 }\n', 'conf/pgveil.yaml', { env: {} });
    expect(config.proxy?.workers).toBe('auto');
    expect(config.proxy?.peerId).toBe(1);
    expect(config.proxy?.peers).toEqual([{ id: 1, host: 'a', port: 6432 }, { id: 2, host: 'b', port: 6433 }]);
    expect(parseConfig('proxy:\n  upstream: { user: u }\n  workers: 4\n', 'conf/pgveil.yaml', { env: {} }).proxy?.workers).toBe(4);
  });

  it('read api.grants', () => {
    const config = parseConfig('api:\n  grants:\n    - { roles: [ingest], kinds: [email, phone], scopes: "*", operations: [protect] }\n', 'conf/pgveil.yaml', { env: {} });
    expect(config.api.grants).toEqual([{ roles: ['ingest'], kinds: ['email', 'phone'], scopes: '*', operations: ['protect'] }]);
  });

  it('name the environment variable a bad value came from', () => {
    expect(errorOf('', { PGVEIL_API_PORT: 'eighty' }).message).toBe(
      'conf/pgveil.yaml: api.listen.port: must be an integer from 0 to 65535 (from environment variable PGVEIL_API_PORT)',
    );
  });

  it('list every mistake in file order', () => {
    const err = errorOf('logging: { level: x }\napi: { listen: { port: -1 } }\n');
    expect(err.issues.map((i) => i.line)).toEqual([1, 2]);
  });

  it('never quote a value (a mistyped secret stays out of the terminal)', () => {
    const secret = 'Sup3r-Secret-Pa55';
    const texts = [
      `proxy:\n  upstream: { user: u, password: ${secret}, sslmode: ${secret} }\n`,
      `proxy:\n  upstream:\n    password: "${secret}\n`,
      `accounts:\n  - { email: a@b.c, passwordHash: ${secret}, apiKeyHash: ${secret} }\n`,
      `api:\n  ${secret}: 1\n`.replace(secret, 'x'),
    ];
    for (const text of texts) expect(errorOf(text).message).not.toContain(secret);
  });

  it('report an unreadable file', async () => {
    await expect(loadConfig('no/such/file.yaml', { env: {} })).rejects.toThrow('no/such/file.yaml: cannot read the configuration file (ENOENT)');
  });
});

describe('loadConfig', () => {
  it('reads a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pgveil-config-'));
    await writeFile(join(dir, 'p.yaml'), 'api:\n  listen: { port: 1234 }\n');
    expect((await loadConfig(join(dir, 'p.yaml'), { env: {} })).api.listen.port).toBe(1234);
  });
});
