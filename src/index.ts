export { createEngine } from './engine/engine.js';
export type { Engine, EngineConfig } from './engine/engineTypes.js';
export { ProtectionError, type ProtectionErrorCode } from './engine/errors.js';
export {
  KINDS, METHODS, LANGS, LANG_KINDS, type Kind, type Method, type Lang,
  type ProtectOptions, type ProtectionResponse, type Discrepancy,
} from './engine/types.js';
export { generateMasterKey } from './keys/masterKey.js';
