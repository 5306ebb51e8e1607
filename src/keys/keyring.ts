import { hkdfSync } from 'node:crypto';
import { KeyError, parseMasterKey } from './masterKey.js';

/** Key versions fit in the token header (see engine/tokens/tokenFormat.ts). */
export const MAX_KEY_VERSION = 31;

export interface KeyVersionInput {
  version: number;
  key: Buffer | Uint8Array | string;
}

export type SubkeyPurpose = string;

/**
 * Holds the master keys by version and derives subkeys by HKDF-SHA-256, one per
 * (purpose, kind, scope, version). Subkeys are cached; nothing here is ever logged or printed.
 */
export class Keyring {
  readonly currentVersion: number;
  private readonly masters = new Map<number, Buffer>();
  private readonly cache = new Map<string, Buffer>();
  private static readonly CACHE_LIMIT = 4096;

  constructor(keys: readonly KeyVersionInput[], currentVersion?: number) {
    if (keys.length === 0) throw new KeyError('at least one master key is required');
    for (const { version, key } of keys) {
      if (!Number.isInteger(version) || version < 1 || version > MAX_KEY_VERSION) {
        throw new KeyError(`key version must be an integer from 1 to ${MAX_KEY_VERSION}; got ${String(version)}`);
      }
      if (this.masters.has(version)) throw new KeyError(`key version ${version} is given twice`);
      this.masters.set(version, parseMasterKey(key));
    }
    const current = currentVersion ?? Math.max(...this.masters.keys());
    if (!this.masters.has(current)) throw new KeyError(`current key version ${current} has no key`);
    this.currentVersion = current;
  }

  hasVersion(version: number): boolean {
    return this.masters.has(version);
  }

  /**
   * The 32-byte subkey for (purpose, kind, scope, version). `purpose` is a method name or an
   * internal label such as "tokenise-tag". Fields are length-prefixed so no two tuples collide.
   */
  subkey(purpose: SubkeyPurpose, kind: string, scope: string, version: number = this.currentVersion): Buffer {
    const id = `${version}\u0000${purpose}\u0000${kind}\u0000${scope}`;
    const hit = this.cache.get(id);
    if (hit) return hit;
    const master = this.masters.get(version);
    if (!master) throw new KeyError(`no key for version ${version}`);
    const info = Buffer.concat(
      ['pgveil/v1', purpose, kind, scope, String(version)].map((field) => {
        const bytes = Buffer.from(field, 'utf8');
        const len = Buffer.alloc(4);
        len.writeUInt32BE(bytes.length);
        return Buffer.concat([len, bytes]);
      }),
    );
    const key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, 32));
    if (this.cache.size >= Keyring.CACHE_LIMIT) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(id, key);
    return key;
  }

  /** Keys must not leak through util.inspect or JSON either. */
  toJSON(): string {
    return '[Keyring]';
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Keyring { versions: [${[...this.masters.keys()].join(', ')}], current: ${this.currentVersion} }`;
  }
}
