import type { ConfigReader, KeyPath } from './configReader.js';
import { DEFAULTS, LOG_LEVELS, type ApiConfig, type LoggingConfig } from './configTypes.js';

const API_KEYS = ['enabled', 'listen', 'limits', 'loginRateLimit'] as const;
const LISTEN_KEYS = ['host', 'port'] as const;
const LIMIT_KEYS = ['maxElements', 'maxElementBytes', 'maxBodyBytes'] as const;
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
  return {
    enabled: r.boolean(api, 'enabled', path, true),
    listen: {
      host: r.string(listen, 'host', lp) ?? DEFAULTS.apiHost,
      port: r.port(listen, 'port', lp, DEFAULTS.apiPort),
    },
    limits: {
      maxElements: r.integer(limits, 'maxElements', lim, DEFAULTS.maxElements, 1, 10_000_000),
      maxElementBytes: r.integer(limits, 'maxElementBytes', lim, DEFAULTS.maxElementBytes, 1, 16 * 1024 * 1024),
      maxBodyBytes: r.integer(limits, 'maxBodyBytes', lim, DEFAULTS.maxBodyBytes, 1024, 1024 * 1024 * 1024),
    },
    loginRateLimit: {
      maxFailuresPerAccount: r.integer(rate, 'maxFailuresPerAccount', rp, DEFAULTS.maxFailuresPerAccount, 1, MAX_INT),
      maxFailuresPerClient: r.integer(rate, 'maxFailuresPerClient', rp, DEFAULTS.maxFailuresPerClient, 1, MAX_INT),
      windowSeconds: r.integer(rate, 'windowSeconds', rp, DEFAULTS.loginWindowSeconds, 1, 7 * 24 * 3600),
    },
  };
}

export function readLoggingSection(r: ConfigReader, value: unknown): LoggingConfig {
  const logging = r.map(value, ['logging'], LOGGING_KEYS) ?? {};
  return { level: r.choice(logging, 'level', ['logging'], LOG_LEVELS, DEFAULTS.logLevel) };
}
