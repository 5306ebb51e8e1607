import { createEngine, type Engine, type Kind, type Lang, type Method } from '../engine/index.js';
import { exampleValue, sizingSample } from './sizingSamples.js';

/**
 * Token lengths do not depend on the key, so sizing uses an engine with an all-zero key: no real
 * key is needed (or touched) to check a policy file.
 */
let sizingEngine: Engine | undefined;
function engine(): Engine {
  sizingEngine ??= createEngine({ masterKey: Buffer.alloc(32) });
  return sizingEngine;
}

const cache = new Map<string, TokenSize>();

export interface TokenSize {
  /** The sample value tokenised, and its length in characters (code points, as varchar counts). */
  readonly sample: string;
  readonly sampleLength: number;
  /** The token's length in characters. */
  readonly tokenLength: number;
}

function charCount(text: string): number {
  return [...text].length;
}

/**
 * The length of the token of the longest value a `maxChars`-character column of `kind` is
 * expected to hold (see sizingSamples.ts), with the policy's noise (a nonce lengthens tokens).
 */
export async function estimateTokenSize(kind: Kind, maxChars: number, noise: number, lang: Lang | undefined): Promise<TokenSize> {
  const key = `${kind}|${maxChars}|${noise}|${lang ?? ''}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const sample = sizingSample(kind, maxChars, lang);
  const options = lang ? { method: 'tokenise', noise, lang } : { method: 'tokenise', noise };
  const { result } = await engine().protect(kind, [sample], options);
  const size: TokenSize = { sample, sampleLength: charCount(sample), tokenLength: charCount(result[0] ?? '') };
  if (cache.size > 1000) cache.clear();
  cache.set(key, size);
  return size;
}

/** What a one-way method stores for a typical value of the kind, for messages. */
export async function exampleOutput(kind: Kind, method: Extract<Method, 'mask' | 'redact'>): Promise<string> {
  const { result } = await engine().protect(kind, [exampleValue(kind)], { method });
  return result[0] ?? '';
}
