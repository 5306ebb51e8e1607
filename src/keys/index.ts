/** The keys module's public surface: the master key and the keyring derived from it. */
export { Keyring, MAX_KEY_VERSION, type KeyVersionInput, type SubkeyPurpose } from './keyring.js';
export { generateMasterKey, KeyError, MASTER_KEY_BYTES, parseMasterKey } from './masterKey.js';
