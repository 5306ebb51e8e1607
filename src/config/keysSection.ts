import type { ConfigMap, ConfigReader, KeyPath } from './configReader.js';
import { DEFAULTS, type KeysConfig, type PreviousKeyConfig } from './configTypes.js';

/** Highest key version tokens can carry (mirrors keys/keyring.ts MAX_KEY_VERSION). */
const MAX_KEY_VERSION = 31;
const KEYS_KEYS = ['masterKeyFile', 'masterKeyEnv', 'keyVersion', 'previousKeys'] as const;
const PREVIOUS_KEYS = ['version', 'file', 'env'] as const;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function envName(r: ConfigReader, map: ConfigMap, key: string, path: KeyPath): string | undefined {
  const name = r.string(map, key, path);
  if (name !== undefined && !ENV_NAME.test(name)) {
    r.issue([...path, key], 'must be an environment variable name (letters, digits, underscore)');
    return undefined;
  }
  return name;
}

/**
 * The `keys` section says where master keys come from, never the keys themselves: a key in the
 * configuration file would end up in the repository next to it.
 */
export function readKeysSection(r: ConfigReader, value: unknown): KeysConfig {
  const path: KeyPath = ['keys'];
  const keys = r.map(value, path, KEYS_KEYS) ?? {};
  const keyVersion = r.integer(keys, 'keyVersion', path, DEFAULTS.keyVersion, 1, MAX_KEY_VERSION);
  const out: KeysConfig = {
    masterKeyEnv: envName(r, keys, 'masterKeyEnv', path) ?? DEFAULTS.masterKeyEnv,
    keyVersion,
    previousKeys: [],
  };
  const file = r.path(keys, 'masterKeyFile', path);
  if (file !== undefined) out.masterKeyFile = file;

  const list = r.list(keys['previousKeys'], [...path, 'previousKeys']) ?? [];
  const seen = new Set<number>([keyVersion]);
  list.forEach((item, i) => {
    const ip: KeyPath = [...path, 'previousKeys', i];
    const entry = r.map(item, ip, PREVIOUS_KEYS);
    if (!entry) return;
    if (entry['version'] === undefined) {
      r.issue([...ip, 'version'], 'is required');
      return;
    }
    const version = r.integer(entry, 'version', ip, 0, 1, MAX_KEY_VERSION);
    if (version === 0) return;
    if (seen.has(version)) {
      r.issue([...ip, 'version'], `key version ${version} is given more than once (keys.keyVersion counts too)`);
      return;
    }
    seen.add(version);
    const prev: PreviousKeyConfig = { version };
    const f = r.path(entry, 'file', ip);
    const e = envName(r, entry, 'env', ip);
    if ((f === undefined) === (e === undefined)) {
      r.issue(ip, 'needs exactly one of: file, env');
      return;
    }
    if (f !== undefined) prev.file = f;
    if (e !== undefined) prev.env = e;
    out.previousKeys.push(prev);
  });
  return out;
}
