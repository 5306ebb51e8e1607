import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { ApiAuthoriser } from '../../../src/api/authorisation.js';
import type { AuditLog } from '../../../src/audit/index.js';
import { startApiServer, type RunningApi } from '../../../src/api/server.js';
import { AccountStore } from '../../../src/auth/accountStore.js';
import { generateApiKey, hashApiKey } from '../../../src/auth/apiKey.js';
import { AuthService } from '../../../src/auth/authService.js';
import type { Clock } from '../../../src/auth/clock.js';
import { hashPassword } from '../../../src/auth/passwordHash.js';
import { DEFAULTS, type AccountConfig, type ApiConfig } from '../../../src/config/configTypes.js';
import { createEngine } from '../../../src/engine/engine.js';
import { Keyring } from '../../../src/keys/keyring.js';

/** A real account: its secrets for the test, their hashes for the server. */
export interface TestAccount {
  email: string;
  password: string;
  apiKey: string;
  config: AccountConfig;
}

/** Cheap scrypt cost (2^4) so tests log in quickly; production hashes use 2^17. */
export async function makeAccount(email: string, roles: string[] = ['analyst'], enabled = true): Promise<TestAccount> {
  const password = randomBytes(12).toString('base64url');
  const apiKey = generateApiKey();
  return {
    email, password, apiKey,
    config: { email, passwordHash: await hashPassword(password, 4), apiKeyHash: hashApiKey(apiKey), roles, enabled },
  };
}

/** A clock tests can move. */
export class TestClock {
  now = Date.UTC(2026, 0, 1, 12, 0, 0);
  readonly fn: Clock = () => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
}

export function apiConfig(overrides: Partial<ApiConfig['limits']> = {}, rate: Partial<ApiConfig['loginRateLimit']> = {}): ApiConfig {
  return {
    enabled: true,
    listen: { host: '127.0.0.1', port: 0 },
    limits: { maxElements: DEFAULTS.maxElements, maxElementBytes: DEFAULTS.maxElementBytes, maxBodyBytes: DEFAULTS.maxBodyBytes, requestTimeoutSeconds: DEFAULTS.requestTimeoutSeconds, maxConnections: DEFAULTS.maxApiConnections, ...overrides },
    loginRateLimit: {
      maxFailuresPerAccount: DEFAULTS.maxFailuresPerAccount,
      maxFailuresPerClient: DEFAULTS.maxFailuresPerClient,
      windowSeconds: DEFAULTS.loginWindowSeconds,
      ...rate,
    },
    // The contract tests drive the engine through the API as these roles; authorisation has tests of its own.
    grants: [{ roles: ['analyst', 'admin'], kinds: '*', scopes: '*', operations: ['protect', 'unprotect'] }],
  };
}

export interface HarnessOptions {
  masterKey?: Buffer;
  accounts: readonly TestAccount[];
  clock?: TestClock;
  config?: ApiConfig;
  /** Collect log lines (JSON text) here. */
  logLines?: string[];
  /** The API's authorisation; by default the configuration's grants alone. */
  authoriser?: ApiAuthoriser;
  audit?: AuditLog;
}

export interface Harness {
  api: RunningApi;
  url: string;
  store: AccountStore;
  clock: TestClock;
  close(): Promise<void>;
}

/** A real server on a free port: real engine, real auth, real HTTP. */
export async function startHarness(opts: HarnessOptions): Promise<Harness> {
  const masterKey = opts.masterKey ?? randomBytes(32);
  const clock = opts.clock ?? new TestClock();
  const store = new AccountStore(opts.accounts.map((a) => a.config));
  const config = opts.config ?? apiConfig();
  const auth = new AuthService({ accounts: store, keyring: new Keyring([{ version: 1, key: masterKey }]), clock: clock.fn, loginRateLimit: config.loginRateLimit });
  const engine = createEngine({ masterKey });
  let logger: pino.Logger | undefined;
  if (opts.logLines) {
    const lines = opts.logLines;
    logger = pino({ level: 'trace' }, new Writable({
      write(chunk: Buffer, _enc, cb) { lines.push(chunk.toString('utf8')); cb(); },
    }));
  }
  const api = await startApiServer({ config, engine, auth, ...(logger ? { logger } : {}), ...(opts.authoriser ? { authoriser: opts.authoriser } : {}), ...(opts.audit ? { audit: opts.audit } : {}) });
  return { api, url: api.url, store, clock, close: () => api.close() };
}

export interface Session {
  jwt_token: string;
  svc_token: string;
  apiKey: string;
}

export async function login(url: string, account: TestAccount): Promise<Session> {
  const res = await fetch(`${url}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: account.email, password: account.password }),
  });
  if (res.status !== 201) throw new Error(`login failed: ${res.status}`);
  const body = (await res.json()) as { jwt_token: string; svc_token: string };
  return { jwt_token: body.jwt_token, svc_token: body.svc_token, apiKey: account.apiKey };
}

export function authHeaders(s: Session): Record<string, string> {
  return { 'x-api-key': s.apiKey, authorization: s.jwt_token, 'svc-token': s.svc_token, 'content-type': 'application/json' };
}

export interface JsonResponse {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

export async function postJson(url: string, path: string, body: unknown, headers: Record<string, string>): Promise<JsonResponse> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), headers: res.headers };
}

/** POST /api/<kind> with a session. */
export function protect(url: string, s: Session, kind: string, body: unknown): Promise<JsonResponse> {
  return postJson(url, `/api/${kind}`, body, authHeaders(s));
}
