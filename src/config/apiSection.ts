import { KINDS, OPERATIONS } from '../engine/index.js';
import { ROLE_NAME } from './accountsSection.js';
import type { ConfigReader, KeyPath } from './configReader.js';
import { DEFAULTS, LOG_LEVELS, type ApiConfig, type ApiGrant, type AuditConfig, type LoggingConfig } from './configTypes.js';

const API_KEYS = ['enabled', 'listen', 'limits', 'loginRateLimit', 'grants', 'metricsToken'] as const;
const GRANT_KEYS = ['roles', 'kinds', 'scopes', 'operations'] as const;
const LISTEN_KEYS = ['host', 'port'] as const;
const LIMIT_KEYS = ['maxElements', 'maxElementBytes', 'maxBodyBytes', 'requestTimeoutSeconds', 'maxConnections'] as const;
const RATE_KEYS = ['maxFailuresPerAccount', 'maxFailuresPerClient', 'windowSeconds'] as const;
const LOGGING_KEYS = ['level'] as const;

const MAX_INT = 2 ** 31 - 1;

export function readApiSection(r: ConfigReader, value: unknown): ApiConfig {
  const path: KeyPath = ['api'];
  const api = r.map(value, path, API_KEYS) ?? {};
  const listen = r.map(api['listen'], [...path, 'listen'], LISTEN_KEYS) ?? {};
  const limits = r.map(api['limits'], [...path, 'limits'], LIMIT_KEYS) ?? {};
  const rate = r.map(api['loginRateLimit'], [...path, 'loginRateLimit'], RATE_KEYS) ?? {};
  const lp: KeyPath = [...path, 'listen'];
  const lim: KeyPath = [...path, 'limits'];
  const rp: KeyPath = [...path, 'loginRateLimit'];
  const metricsToken = r.string(api, 'metricsToken', path);
  if (metricsToken !== undefined && metricsToken.length < 16) r.issue([...path, 'metricsToken'], 'must be at least 16 characters (generate one: openssl rand -base64 24)');
  return {
    ...(metricsToken === undefined ? {} : { metricsToken }),
    enabled: r.boolean(api, 'enabled', path, true),
    listen: {
      host: r.string(listen, 'host', lp) ?? DEFAULTS.apiHost,
      port: r.port(listen, 'port', lp, DEFAULTS.apiPort),
    },
    limits: {
      maxElements: r.integer(limits, 'maxElements', lim, DEFAULTS.maxElements, 1, 10_000_000),
      maxElementBytes: r.integer(limits, 'maxElementBytes', lim, DEFAULTS.maxElementBytes, 1, 16 * 1024 * 1024),
      maxBodyBytes: r.integer(limits, 'maxBodyBytes', lim, DEFAULTS.maxBodyBytes, 1024, 1024 * 1024 * 1024),
      requestTimeoutSeconds: r.integer(limits, 'requestTimeoutSeconds', lim, DEFAULTS.requestTimeoutSeconds, 1, 3600),
      maxConnections: r.integer(limits, 'maxConnections', lim, DEFAULTS.maxApiConnections, 1, 1_000_000),
    },
    loginRateLimit: {
      maxFailuresPerAccount: r.integer(rate, 'maxFailuresPerAccount', rp, DEFAULTS.maxFailuresPerAccount, 1, MAX_INT),
      maxFailuresPerClient: r.integer(rate, 'maxFailuresPerClient', rp, DEFAULTS.maxFailuresPerClient, 1, MAX_INT),
      windowSeconds: r.integer(rate, 'windowSeconds', rp, DEFAULTS.loginWindowSeconds, 1, 7 * 24 * 3600),
    },
    grants: readGrants(r, api['grants'], [...path, 'grants']),
  };
}

/** A list of strings each of which `valid` accepts; `'*'` alone where `wildcard` allows it. */
function stringList(r: ConfigReader, value: unknown, path: KeyPath, what: string, valid: (item: string) => boolean, wildcard: boolean): string[] | '*' | undefined {
  if (wildcard && value === '*') return '*';
  if (value === undefined || value === null) {
    r.issue(path, `is required: a list of ${what}${wildcard ? ', or "*" for all' : ''}`);
    return undefined;
  }
  const list = r.list(value, path);
  if (list === undefined) return undefined;
  const items: string[] = [];
  list.forEach((item, i) => {
    if (typeof item !== 'string' || !valid(item)) r.issue([...path, i], `must be one of the ${what}`);
    else items.push(item);
  });
  if (items.length === 0 && list.length === 0) r.issue(path, `must name at least one of the ${what}`);
  return items;
}

function readGrants(r: ConfigReader, value: unknown, path: KeyPath): ApiGrant[] {
  const grants: ApiGrant[] = [];
  (r.list(value, path) ?? []).forEach((item, i) => {
    const gp: KeyPath = [...path, i];
    const grant = r.map(item, gp, GRANT_KEYS);
    if (!grant) return;
    const roles = stringList(r, grant['roles'], [...gp, 'roles'], 'role names', (role) => ROLE_NAME.test(role), false);
    const kinds = stringList(r, grant['kinds'], [...gp, 'kinds'], `kinds (${KINDS.join(', ')})`, (kind) => (KINDS as readonly string[]).includes(kind), true);
    const scopes = stringList(r, grant['scopes'], [...gp, 'scopes'], 'scope names', (scope) => scope.length > 0, true);
    const operations = stringList(r, grant['operations'], [...gp, 'operations'], `operations (${OPERATIONS.join(', ')})`, (op) => (OPERATIONS as readonly string[]).includes(op), false);
    if (roles === undefined || roles === '*' || kinds === undefined || scopes === undefined || operations === undefined || operations === '*') return;
    grants.push({ roles, kinds, scopes, operations: operations as ApiGrant['operations'] });
  });
  return grants;
}

const AUDIT_KEYS = ['destination', 'file'] as const;

export function readAuditSection(r: ConfigReader, value: unknown): AuditConfig {
  const audit = r.map(value, ['audit'], AUDIT_KEYS) ?? {};
  const destination = r.choice(audit, 'destination', ['audit'], ['stdout', 'file', 'off'] as const, 'stdout');
  if (destination !== 'file') {
    if (audit['file'] !== undefined) r.issue(['audit', 'file'], 'is only read with destination: file');
    return { destination };
  }
  const file = r.path(audit, 'file', ['audit'], { required: true });
  return file === undefined ? { destination: 'off' } : { destination, file };
}

export function readLoggingSection(r: ConfigReader, value: unknown): LoggingConfig {
  const logging = r.map(value, ['logging'], LOGGING_KEYS) ?? {};
  return { level: r.choice(logging, 'level', ['logging'], LOG_LEVELS, DEFAULTS.logLevel) };
}
