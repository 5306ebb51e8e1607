/** The protection engine's public surface: `createEngine(config)` and the shapes it speaks. */
export { createEngine } from './engine.js';
export type { Engine, EngineConfig, EngineWithValueProtection } from './engineTypes.js';
export type { ByteFields } from './kinds/kind.js';
export {
  INVALID_SCOPE, INVALID_TOKEN, type UnprotectDiscrepancy, type UnprotectInPlace, type ValueProtection,
} from './valueProtection.js';
export { ProtectionError, type ProtectionErrorCode } from './errors.js';
export { MAX_NOISE, MAX_SCOPE_BYTES, resolveOptions } from './options.js';
export {
  DEFAULT_METHOD, DEFAULT_SCOPE, KINDS, LANG_KINDS, LANGS, METHODS, OPERATIONS, REVERSIBLE_METHODS,
  isKind, isLang, isMethod,
  type Discrepancy, type Kind, type Lang, type Method, type Operation, type ProtectOptions, type ProtectionResponse,
} from './types.js';
export { DEFAULT_MAX_VALUE_BYTES, isLongerThan, maxTokenBytes } from './valueLimits.js';
export { inSlices } from './slicedWork.js';
export { nativeFf1Status } from './crypto/nativeFf1.js';
export { nativeDigestsStatus } from './crypto/nativeSha256.js';
export type { NativeStatus } from './crypto/nativeAddon.js';
export { indexesInSlices, mapInSlices } from './slicedBatch.js';
export { currentTokenSpelling } from './tokens/tokenCodecs.js';
export { isValueOfKind } from './kindValidation.js';
export { isLuhnValidCcn } from './kinds/ccn.js';
export { countDigits } from './kinds/digitTemplate.js';
export { isIssuableSsn } from './kinds/ssn.js';
