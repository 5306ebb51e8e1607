/** The configuration module's public surface. */
export { addAccountToConfigText, AccountExistsError } from './accountsEditor.js';
export {
  API_KEY_HASH_PATTERN, isScryptHash, normaliseEmail, ROLE_NAME, SCRYPT_HASH_PATTERN,
} from './accountsSection.js';
export { ConfigError, formatIssue, type ConfigIssue } from './configError.js';
export { ConfigReader, type KeyPath } from './configReader.js';
export * from './configTypes.js';
export { watchConfig, type ConfigWatcher, type WatchConfigOptions } from './configWatcher.js';
export { watchFileChanges, type FileChangeWatcher, type WatchFileChangesOptions } from './fileChangeWatcher.js';
export { ENV_OVERRIDES, type Env } from './envOverrides.js';
export { loadKeyMaterial, type KeyMaterial } from './keySource.js';
export { loadConfig, parseConfig, type LoadConfigOptions } from './loadConfig.js';
