import { resolve } from 'node:path';
import { pathText } from './configReader.js';

export type Env = Readonly<Record<string, string | undefined>>;

interface EnvOverride {
  env: string;
  path: readonly string[];
  type: 'string' | 'integer' | 'path';
  /** Applied only when this top-level section is present in the file. */
  onlyIfSection?: string;
}

/**
 * Settings that deployments commonly set per host or keep out of files: listen ports and secrets.
 * The master key itself is read from the variable named by keys.masterKeyEnv (see keySource.ts).
 */
export const ENV_OVERRIDES: readonly EnvOverride[] = [
  { env: 'PGVEIL_API_HOST', path: ['api', 'listen', 'host'], type: 'string' },
  { env: 'PGVEIL_API_PORT', path: ['api', 'listen', 'port'], type: 'integer' },
  { env: 'PGVEIL_PROXY_HOST', path: ['proxy', 'listen', 'host'], type: 'string', onlyIfSection: 'proxy' },
  { env: 'PGVEIL_PROXY_PORT', path: ['proxy', 'listen', 'port'], type: 'integer', onlyIfSection: 'proxy' },
  { env: 'PGVEIL_UPSTREAM_HOST', path: ['proxy', 'upstream', 'host'], type: 'string', onlyIfSection: 'proxy' },
  { env: 'PGVEIL_UPSTREAM_PORT', path: ['proxy', 'upstream', 'port'], type: 'integer', onlyIfSection: 'proxy' },
  { env: 'PGVEIL_UPSTREAM_USER', path: ['proxy', 'upstream', 'user'], type: 'string', onlyIfSection: 'proxy' },
  { env: 'PGVEIL_UPSTREAM_PASSWORD', path: ['proxy', 'upstream', 'password'], type: 'string', onlyIfSection: 'proxy' },
  { env: 'PGVEIL_MASTER_KEY_FILE', path: ['keys', 'masterKeyFile'], type: 'path' },
  { env: 'PGVEIL_LOG_LEVEL', path: ['logging', 'level'], type: 'string' },
  { env: 'PGVEIL_METRICS_TOKEN', path: ['api', 'metricsToken'], type: 'string' },
];

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * Writes the set environment variables into the parsed file (a plain object, modified in place)
 * and returns which key paths they set, so mistakes are reported against the variable.
 */
export function applyEnvOverrides(root: Record<string, unknown>, env: Env): Map<string, string> {
  const sources = new Map<string, string>();
  for (const o of ENV_OVERRIDES) {
    const raw = env[o.env];
    if (raw === undefined || raw === '') continue;
    if (o.onlyIfSection !== undefined && asObject(root[o.onlyIfSection]) === undefined) continue;
    let value: unknown = raw;
    if (o.type === 'integer' && /^\d{1,10}$/.test(raw.trim())) value = Number(raw.trim());
    if (o.type === 'path') value = resolve(raw);
    let node = root;
    let ok = true;
    for (const seg of o.path.slice(0, -1)) {
      const existing = node[seg];
      if (existing === undefined || existing === null) node[seg] = {};
      const next = asObject(node[seg]);
      if (!next) { ok = false; break; } // the file's own shape error is reported by validation
      node = next;
    }
    const last = o.path[o.path.length - 1];
    if (!ok || last === undefined) continue;
    node[last] = value;
    sources.set(pathText(o.path), o.env);
  }
  return sources;
}
