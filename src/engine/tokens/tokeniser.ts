import { randomBytes, randomFillSync } from 'node:crypto';
import type { Keyring } from '../../keys/index.js';
import { FF1 } from '../crypto/ff1.js';
import { offHeapUint8Array } from '../crypto/offHeapSlab.js';
import type { Kind, Lang } from '../types.js';
import { packValue, unpackValue } from './packing.js';
import { TOKEN_CODECS } from './tokenCodecs.js';
import { nativeSealerFor, numeralsFor, sealInTypeScript, tokenBytesFor, tokenOpenerFor, type NativeSealer, type TokenOpener } from './tokenSeal.js';
import {
  PREFIX_BYTES, TAG_BYTES, encodeHeader, nonceCodeForNoise, nonceLength,
  scopeId, scopeMatches, splitToken, tagMatches, whiten, writeTag, type TokenLayout,
} from './tokenFormat.js';
import {
  UNSEALED_NOT_A_TOKEN, UNSEALED_OTHER_SCOPE, nativeTokensUnsealerFor, nativeUnsealerFor, type TokenUnsealer, type TokensUnsealer,
} from './tokenUnseal.js';

export interface UnprotectOutcome {
  result: string[];
  invalidToken: number[];
  invalidScope: number[];
}

const TAG_PURPOSE = 'tokenise-tag';
const BODY_PURPOSE = 'tokenise';

/** FF1 over bytes reads numerals as Uint16Array, here bytes[start..end). */
function toNumerals(bytes: Uint8Array, start = 0, end = bytes.length): Uint16Array {
  const numerals = new Uint16Array(end - start);
  for (let i = start; i < end; i++) numerals[i - start] = bytes[i] as number;
  return numerals;
}

/** bytes[start..end) copied: subarray() of a small fresh array moves it off V8's heap (a malloc per call). */
function copyOf(bytes: Uint8Array, start: number, end: number): Uint8Array {
  const copy = new Uint8Array(end - start);
  for (let i = start; i < end; i++) copy[i - start] = bytes[i] as number;
  return copy;
}

/** The authenticated tokens of one key version, decrypted together. */
interface VersionGroup {
  keys: VersionKeys;
  indexes: number[];
  tweaks: Uint8Array[];
  bodies: Uint16Array[];
}

/** A token whose tag and scope checked out: its unwhitened bytes, their layout, its version's keys. */
interface OpenedToken {
  readonly bytes: Uint8Array;
  readonly layout: TokenLayout;
  readonly keys: VersionKeys;
}

/** A kind's keys under one key version: the tag key, and the body cipher per scope. */
interface VersionKeys {
  tagKey: Buffer;
  /** Unwhitens token bytes and checks their tag under tagKey (natively where the addon does). */
  open: TokenOpener;
  ciphers: Map<string, FF1>;
  /** By scope: the addon's one-call unseal of this version's tokens, null where it has none. */
  unsealers: Map<string, Unsealers | null>;
}

/** The addon's unseal of one (kind, scope, version)'s tokens, one at a time and many at once. */
interface Unsealers {
  readonly one: TokenUnsealer;
  readonly many: TokensUnsealer;
}
const CIPHERS_PER_KIND = 1024;

/** unprotectOne's tweak (H‖S‖N), one per length (5 to 21 bytes), long-lived for the same reason. */
const oneValueTweaks: (Uint8Array | undefined)[] = [];

/** Why unprotectOne gave no plaintext: not a token of this kind (or key), or a token of another scope. */
export const NOT_A_TOKEN = 1;
export const OTHER_SCOPE = 2;
export type TokenDiscrepancy = typeof NOT_A_TOKEN | typeof OTHER_SCOPE;

/**
 * What every token of one (kind, scope, noise) shares (the keyring's current version is fixed for
 * its life): a caller that protects values one by one holds it, and a value costs its own work.
 */
export interface HeldTokenising {
  readonly kind: Kind;
  readonly tagKey: Buffer;
  readonly cipher: FF1;
  readonly nonceBytes: number;
  /** H‖S, then room for the nonce: the tweak of every token (the nonce drawn again per token). */
  readonly tweak: Uint8Array;
  /** The addon's one-call seal, where it is loaded. */
  readonly nativeSeal: NativeSealer | undefined;
}

/**
 * A token's plaintext, or why there is none, from the addon's one-call unseal; undefined where
 * it does not take the token (no addon, another key version, a long body): the caller opens it.
 */
function unsealedValue(outcome: string | number): string | TokenDiscrepancy | undefined {
  if (typeof outcome === 'string') return outcome;
  if (outcome === UNSEALED_NOT_A_TOKEN) return NOT_A_TOKEN;
  return outcome === UNSEALED_OTHER_SCOPE ? OTHER_SCOPE : undefined;
}

/**
 * Vaultless, reversible tokens in the kind's alphabet (see tokenFormat.ts for the layout).
 * The FF1 over the token bodies runs batched across the request.
 */
export class Tokeniser {
  /**
   * By kind, then version: keys and ciphers, so a call finds them with two small lookups
   * instead of building the keyring's cache key per subkey.
   */
  private readonly keys = new Map<Kind, (VersionKeys | undefined)[]>();

  constructor(private readonly keyring: Keyring) {}

  private keysFor(kind: Kind, version: number): VersionKeys {
    let byVersion = this.keys.get(kind);
    if (!byVersion) {
      byVersion = [];
      this.keys.set(kind, byVersion);
    }
    let keys = byVersion[version];
    if (!keys) {
      const tagKey = this.keyring.subkey(TAG_PURPOSE, kind, '', version);
      keys = { tagKey, open: tokenOpenerFor(tagKey), ciphers: new Map(), unsealers: new Map() };
      byVersion[version] = keys;
    }
    return keys;
  }

  private bodyCipher(kind: Kind, scope: string, version: number, keys: VersionKeys): FF1 {
    let cipher = keys.ciphers.get(scope);
    if (!cipher) {
      // Scopes come from requests: bound the map rather than grow it without end.
      if (keys.ciphers.size >= CIPHERS_PER_KIND) {
        keys.ciphers.clear();
        keys.unsealers.clear();
      }
      cipher = new FF1(this.keyring.subkey(BODY_PURPOSE, kind, scope, version), 256);
      keys.ciphers.set(scope, cipher);
    }
    return cipher;
  }

  /** The one-call unseal of the current version's tokens of (kind, scope); undefined without the addon. */
  private currentUnsealers(kind: Kind, scope: string): Unsealers | undefined {
    const version = this.keyring.currentVersion;
    const keys = this.keysFor(kind, version);
    let unsealers = keys.unsealers.get(scope);
    if (unsealers === undefined) {
      const cipher = this.bodyCipher(kind, scope, version, keys);
      const id = scopeId(keys.tagKey, scope);
      const one = nativeUnsealerFor(cipher, keys.tagKey, version, id);
      const many = nativeTokensUnsealerFor(cipher, keys.tagKey, version, id);
      unsealers = one && many ? { one, many } : null;
      keys.unsealers.set(scope, unsealers);
    }
    return unsealers ?? undefined;
  }

  protect(kind: Kind, values: readonly string[], scope: string, noise: number, lang: Lang): string[] {
    const version = this.keyring.currentVersion;
    const keys = this.keysFor(kind, version);
    const tagKey = keys.tagKey;
    const nonceCode = nonceCodeForNoise(noise);
    const nonceBytes = nonceLength(nonceCode);
    const prefix = new Uint8Array(PREFIX_BYTES);
    prefix[0] = encodeHeader(nonceCode, version);
    prefix.set(scopeId(tagKey, scope), 1);

    // Without noise every tweak is H‖S: one array serves the whole batch.
    let tweaks: Uint8Array | Uint8Array[] = prefix;
    if (nonceBytes) {
      const nonces = randomBytes(nonceBytes * values.length);
      tweaks = values.map((_, i) => {
        const tweak = new Uint8Array(PREFIX_BYTES + nonceBytes);
        tweak.set(prefix);
        tweak.set(nonces.subarray(i * nonceBytes, (i + 1) * nonceBytes), PREFIX_BYTES);
        return tweak;
      });
    }
    const bodies = this.bodyCipher(kind, scope, version, keys).encrypt(values.map((v) => toNumerals(packValue(v))), tweaks);
    const codec = TOKEN_CODECS[kind];
    const tweakLength = PREFIX_BYTES + nonceBytes;
    return values.map((value, i) => {
      const body = bodies[i] as Uint16Array;
      const token = new Uint8Array(tweakLength + body.length + TAG_BYTES);
      token.set(tweaks instanceof Uint8Array ? tweaks : (tweaks[i] as Uint8Array));
      token.set(body, tweakLength);
      writeTag(tagKey, token, tweakLength + body.length);
      whiten(token);
      return codec.render(token, value, lang);
    });
  }

  /** The shared part of one (kind, scope, noise)'s tokens, for protectOne. */
  holdTokenising(kind: Kind, scope: string, noise: number): HeldTokenising {
    const nonceCode = nonceCodeForNoise(noise);
    const nonceBytes = nonceLength(nonceCode);
    const version = this.keyring.currentVersion;
    const keys = this.keysFor(kind, version);
    const tweak = new Uint8Array(PREFIX_BYTES + nonceBytes);
    tweak[0] = encodeHeader(nonceCode, version);
    tweak.set(scopeId(keys.tagKey, scope), 1);
    const cipher = this.bodyCipher(kind, scope, version, keys);
    return { kind, tagKey: keys.tagKey, cipher, nonceBytes, tweak, nativeSeal: nativeSealerFor(cipher, keys.tagKey) };
  }

  /**
   * `protect(kind, [value], scope, noise, lang)[0]` for the held (kind, scope, noise): the same
   * token (the same bytes without noise; with it, a fresh nonce as protect draws), without the
   * batch's arrays.
   */
  protectOne(held: HeldTokenising, value: string, lang: Lang): string {
    const { tweak, nonceBytes } = held;
    if (nonceBytes > 0) randomFillSync(tweak, PREFIX_BYTES, nonceBytes);
    const packed = packValue(value);
    const bodyLength = packed.length;
    const tweakLength = tweak.length;
    const token = tokenBytesFor(tweakLength + bodyLength + TAG_BYTES);
    for (let i = 0; i < tweakLength; i++) token[i] = tweak[i] as number;
    for (let i = 0; i < bodyLength; i++) token[tweakLength + i] = packed[i] as number;
    packed.fill(0);
    try {
      if (held.nativeSeal?.(token, tweakLength, bodyLength) !== true) sealInTypeScript(held.cipher, held.tagKey, token, tweakLength, bodyLength);
    } catch (error) {
      token.fill(0); // the plaintext may still be there
      throw error;
    }
    return TOKEN_CODECS[held.kind].render(token, value, lang);
  }

  /**
   * `unprotect(kind, [token], scope)` for one token: its plaintext, or why there is none (where
   * that call lists the index in invalidToken or invalidScope), without the batch's arrays.
   */
  unprotectOne(kind: Kind, token: string, scope: string): string | TokenDiscrepancy {
    // parse gives a fresh array: the open unwhitens it in place (the unseal works on a copy).
    const parsed = TOKEN_CODECS[kind].parse(token);
    if (parsed === null) return NOT_A_TOKEN;
    const unseal = this.currentUnsealers(kind, scope)?.one;
    const unsealed = unseal === undefined ? undefined : unsealedValue(unseal(parsed));
    if (unsealed !== undefined) return unsealed;
    const opened = this.openParsed(kind, parsed, scope);
    if (typeof opened === 'number') return opened;
    const { bytes, layout, keys } = opened;
    const { bodyStart, bodyEnd } = layout;
    const tweak = (oneValueTweaks[bodyStart] ??= offHeapUint8Array(bodyStart));
    for (let i = 0; i < bodyStart; i++) tweak[i] = bytes[i] as number;
    const bodyLength = bodyEnd - bodyStart;
    const [numerals, plain] = numeralsFor(bodyLength);
    for (let i = 0; i < bodyLength; i++) numerals[i] = bytes[bodyStart + i] as number;
    const packed = new Uint8Array(bodyLength);
    try {
      this.bodyCipher(kind, scope, layout.version, keys).cryptInto(numerals, tweak, true, plain);
      for (let i = 0; i < bodyLength; i++) packed[i] = plain[i] as number;
    } finally {
      plain.fill(0);
    }
    const value = unpackValue(packed);
    packed.fill(0);
    return value ?? NOT_A_TOKEN;
  }

  /** Parsed token bytes unwhitened, their layout and keys once the tag and scope check out; else why they are no token here. */
  private openParsed(kind: Kind, bytes: Uint8Array, scope: string): OpenedToken | TokenDiscrepancy {
    // Unwhitened and checked against the current key's tag in one step: the version the tag is
    // under is in the whitened header, and nearly every token is of the current one.
    const currentVersion = this.keyring.currentVersion;
    const current = this.keysFor(kind, currentVersion);
    const currentTag = current.open(bytes);
    const layout = splitToken(bytes);
    if (layout === null || !this.keyring.hasVersion(layout.version)) return NOT_A_TOKEN;
    const keys = layout.version === currentVersion ? current : this.keysFor(kind, layout.version);
    // The tag does not depend on the scope: a token of this kind from another scope passes it.
    const tagged = keys === current ? currentTag : tagMatches(keys.tagKey, bytes, layout.bodyEnd);
    if (!tagged) return NOT_A_TOKEN;
    if (!scopeMatches(bytes, scopeId(keys.tagKey, scope))) return OTHER_SCOPE;
    return { bytes, layout, keys };
  }

  unprotect(kind: Kind, tokens: readonly string[], scope: string): UnprotectOutcome {
    const result = [...tokens];
    const invalidToken: number[] = [];
    const invalidScope: number[] = [];
    // Valid tokens grouped by key version, so that each version's bodies decrypt in one batch.
    const byVersion = new Map<number, VersionGroup>();

    const codec = TOKEN_CODECS[kind];
    // parse gives fresh arrays: the open unwhitens them in place (the unseal works on copies).
    const parsedTokens = tokens.map((token) => codec.parse(token));
    const outcomes = this.currentUnsealers(kind, scope)?.many(parsedTokens);
    for (let index = 0; index < tokens.length; index++) {
      const parsed = parsedTokens[index] as Uint8Array | null;
      const unsealed = parsed === null ? NOT_A_TOKEN : outcomes === undefined ? undefined : unsealedValue(outcomes[index] as string | number);
      if (typeof unsealed === 'string') result[index] = unsealed;
      else if (unsealed === NOT_A_TOKEN) invalidToken.push(index);
      else if (unsealed === OTHER_SCOPE) invalidScope.push(index);
      if (unsealed !== undefined) continue;
      const opened = this.openParsed(kind, parsed as Uint8Array, scope);
      if (opened === NOT_A_TOKEN) invalidToken.push(index);
      else if (opened === OTHER_SCOPE) invalidScope.push(index);
      else {
        const { bytes, layout } = opened;
        let group = byVersion.get(layout.version);
        if (!group) {
          group = { keys: opened.keys, indexes: [], tweaks: [], bodies: [] };
          byVersion.set(layout.version, group);
        }
        group.indexes.push(index);
        group.tweaks.push(copyOf(bytes, 0, layout.bodyStart));
        group.bodies.push(toNumerals(bytes, layout.bodyStart, layout.bodyEnd));
      }
    }

    for (const [version, group] of byVersion) {
      if (!group.indexes.length) continue;
      const plain = this.bodyCipher(kind, scope, version, group.keys).decrypt(group.bodies, group.tweaks);
      group.indexes.forEach((index, i) => {
        const value = unpackValue(new Uint8Array(plain[i] as Uint16Array));
        if (value === null) invalidToken.push(index);
        else result[index] = value;
      });
    }
    invalidToken.sort((a, b) => a - b);
    return { result, invalidToken, invalidScope };
  }
}
