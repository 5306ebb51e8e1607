export {
  createEngine, ProtectionError, KINDS, METHODS, LANGS, LANG_KINDS,
  type Engine, type EngineConfig, type ProtectionErrorCode, type Kind, type Method, type Lang,
  type ProtectOptions, type ProtectionResponse, type Discrepancy,
  INVALID_SCOPE, INVALID_TOKEN, type EngineWithValueProtection, type ValueProtection, type UnprotectDiscrepancy,
} from './engine/index.js';
export { generateMasterKey } from './keys/index.js';
