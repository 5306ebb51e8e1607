import { randomBytes } from 'node:crypto';
import type { Keyring } from '../../keys/keyring.js';
import { FF1 } from '../crypto/ff1.js';
import type { Kind, Lang } from '../types.js';
import { packValue, unpackValue } from '../tokens/packing.js';
import { TOKEN_CODECS } from '../tokens/tokenCodecs.js';
import {
  PREFIX_BYTES, TAG_BYTES, computeTag, encodeHeader, nonceCodeForNoise, nonceLength,
  sameBytes, scopeId, splitToken, whiten, type ParsedToken,
} from './tokenFormat.js';

export interface UnprotectOutcome {
  result: string[];
  invalidToken: number[];
  invalidScope: number[];
}

const TAG_PURPOSE = 'tokenise-tag';
const BODY_PURPOSE = 'tokenise';

function toNumerals(bytes: Uint8Array): Uint16Array {
  return Uint16Array.from(bytes);
}

/**
 * Vaultless, reversible tokens in the kind's alphabet (see tokenFormat.ts for the layout).
 * The FF1 over the token bodies runs batched across the request.
 */
export class Tokeniser {
  private readonly ciphers = new WeakMap<Buffer, FF1>();

  constructor(private readonly keyring: Keyring) {}

  private bodyCipher(kind: Kind, scope: string, version: number): FF1 {
    const key = this.keyring.subkey(BODY_PURPOSE, kind, scope, version);
    let cipher = this.ciphers.get(key);
    if (!cipher) {
      cipher = new FF1(key, 256);
      this.ciphers.set(key, cipher);
    }
    return cipher;
  }

  protect(kind: Kind, values: readonly string[], scope: string, noise: number, lang: Lang): string[] {
    const version = this.keyring.currentVersion;
    const tagKey = this.keyring.subkey(TAG_PURPOSE, kind, '', version);
    const sid = scopeId(tagKey, scope);
    const nonceCode = nonceCodeForNoise(noise);
    const nonceBytes = nonceLength(nonceCode);
    const header = encodeHeader(nonceCode, version);

    const tweaks = values.map(() => {
      const tweak = new Uint8Array(PREFIX_BYTES + nonceBytes);
      tweak[0] = header;
      tweak.set(sid, 1);
      if (nonceBytes) tweak.set(randomBytes(nonceBytes), PREFIX_BYTES);
      return tweak;
    });
    const bodies = this.bodyCipher(kind, scope, version).encrypt(
      values.map((v) => toNumerals(packValue(v))),
      tweaks,
    );
    const codec = TOKEN_CODECS[kind];
    return values.map((value, i) => {
      const tweak = tweaks[i] as Uint8Array;
      const body = bodies[i] as Uint16Array;
      const token = new Uint8Array(tweak.length + body.length + TAG_BYTES);
      token.set(tweak);
      token.set(body, tweak.length);
      token.set(computeTag(tagKey, token.subarray(0, tweak.length + body.length)), tweak.length + body.length);
      whiten(token);
      return codec.render(token, value, lang);
    });
  }

  unprotect(kind: Kind, tokens: readonly string[], scope: string): UnprotectOutcome {
    const codec = TOKEN_CODECS[kind];
    const result = [...tokens];
    const invalidToken: number[] = [];
    const invalidScope: number[] = [];
    // Valid tokens grouped by key version, so each version's bodies decrypt in one batch.
    const byVersion = new Map<number, { index: number; token: ParsedToken }[]>();

    tokens.forEach((text, index) => {
      const bytes = codec.parse(text);
      const parsed = bytes ? this.authenticate(kind, bytes) : null;
      if (!parsed) {
        invalidToken.push(index);
        return;
      }
      const tagKey = this.keyring.subkey(TAG_PURPOSE, kind, '', parsed.version);
      if (!sameBytes(parsed.scopeId, scopeId(tagKey, scope))) {
        invalidScope.push(index);
        return;
      }
      const group = byVersion.get(parsed.version) ?? [];
      group.push({ index, token: parsed });
      byVersion.set(parsed.version, group);
    });

    for (const [version, group] of byVersion) {
      const plain = this.bodyCipher(kind, scope, version).decrypt(
        group.map((g) => toNumerals(g.token.body)),
        group.map((g) => g.token.tweak),
      );
      group.forEach(({ index }, i) => {
        const value = unpackValue(Uint8Array.from(plain[i] as Uint16Array));
        if (value === null) invalidToken.push(index);
        else result[index] = value;
      });
    }
    invalidToken.sort((a, b) => a - b);
    return { result, invalidToken, invalidScope };
  }

  /** Unwhitens and checks the scope-independent tag; null for anything that is no token. */
  private authenticate(kind: Kind, bytes: Uint8Array): ParsedToken | null {
    const copy = Uint8Array.from(bytes);
    whiten(copy);
    const parsed = splitToken(copy);
    if (!parsed || !this.keyring.hasVersion(parsed.version)) return null;
    const tagKey = this.keyring.subkey(TAG_PURPOSE, kind, '', parsed.version);
    return sameBytes(parsed.tag, computeTag(tagKey, parsed.tagged)) ? parsed : null;
  }
}
