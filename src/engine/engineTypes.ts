import type { KeyVersionInput } from '../keys/index.js';
import type { ProtectionResponse, ProtectOptions } from './types.js';
import type { ValueProtection } from './valueProtection.js';

export interface EngineConfig {
  /** 32 bytes, as a Buffer or base64 text. Version `keyVersion` (default 1). */
  masterKey: Buffer | Uint8Array | string;
  /** The version of `masterKey`; new tokens carry it. Default 1. */
  keyVersion?: number;
  /** Earlier master keys, kept so tokens made with them still unprotect after a rotation. */
  previousKeys?: readonly KeyVersionInput[];
  /**
   * The longest value tokenise and fpe accept, in UTF-8 bytes (default 4096); longer ones fail with
   * `value_too_long`, and unprotect treats input too long to be a token of such a value as no token.
   */
  maxValueBytes?: number;
}

/** The protection engine: the same keys give the same tokens in every process. */
export interface Engine {
  /**
   * Protects `data` (strings) as values of `kind`. Throws ProtectionError for a bad kind, option
   * or element; never returns plaintext for an element it could not protect.
   */
  protect(kind: string, data: readonly unknown[], options?: ProtectOptions): Promise<ProtectionResponse>;
  /** Unprotects; elements that are no token come back unchanged and are listed in `discrepancy`. */
  unprotect(kind: string, data: readonly unknown[], options?: ProtectOptions): Promise<ProtectionResponse>;
}

/** The engine createEngine makes: the batch calls, and protection of one value at a time. */
export interface EngineWithValueProtection extends Engine {
  /**
   * The protection of `kind` under `options`, checked and resolved once, for a caller that
   * protects one value per call (the proxy: one Bind or DataRow value after another). Its calls
   * are synchronous and give exactly the bytes and refusals of protect / unprotect with a batch
   * of that one value. Throws what protect throws for a bad kind or option.
   */
  valueProtection(kind: string, options?: ProtectOptions): ValueProtection;
}
