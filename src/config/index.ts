/** The configuration module's public surface. */
export { addAccountToConfigText, AccountExistsError } from './accountsEditor.js';
export { normaliseEmail } from './accountsSection.js';
export { ConfigError, formatIssue, type ConfigIssue } from './configError.js';
export * from './configTypes.js';
export { watchConfig, type ConfigWatcher, type WatchConfigOptions } from './configWatcher.js';
export { ENV_OVERRIDES, type Env } from './envOverrides.js';
export { loadKeyMaterial, type KeyMaterial } from './keySource.js';
export { loadConfig, parseConfig, type LoadConfigOptions } from './loadConfig.js';
