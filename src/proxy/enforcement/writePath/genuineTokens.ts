/**
 * Tokens already protected under a column's policy go to the database as they are. An analyst
 * reads a tokenised column as its tokens, and BI tools send what they show back: a drill-through
 * or "filter by this value" compares the column with a token, result-set editing writes the row
 * back as read. Tokenised a second time, the token would find no row and be stored as a token of
 * a token. A tokenise token is told from any other text by its tag and scope id (what unprotect
 * checks), so only genuine tokens of the column's own kind and scope are kept; plaintext, and
 * tokens of other scopes, are tokenised as before. fpe ciphertext cannot be told from plaintext
 * and is always encrypted.
 */
import { ProtectionError, type Engine, type ProtectionResponse, type ValueProtection } from '../../../engine/index.js';

/** The engine whose tokenise `protect` keeps each element that already unprotects under the same options. */
export function keepGenuineTokens(engine: Engine): Engine {
  return {
    async protect(kind, data, options) {
      if ((options?.method ?? 'tokenise') !== 'tokenise' || data.length === 0) return engine.protect(kind, data, options);
      const genuine = await genuineIndexes(engine, kind, data, options);
      if (genuine.size === 0) return engine.protect(kind, data, options);
      const others: number[] = [];
      for (let i = 0; i < data.length; i++) if (!genuine.has(i)) others.push(i);
      const protectedOthers = others.length === 0 ? undefined : await protectSome(engine, kind, data, options, others);
      const result = data.map((value) => value as string);
      others.forEach((index, i) => { result[index] = protectedOthers?.result[i] as string; });
      const base: ProtectionResponse = protectedOthers ?? { operation: 'protect', result: [], method: 'tokenise' };
      return { ...base, result };
    },
    unprotect: (kind, data, options) => engine.unprotect(kind, data, options),
  };
}

/** One value at a time, as keepGenuineTokens does for a batch. */
export function keepGenuineToken(protection: ValueProtection): ValueProtection {
  if (protection.method !== 'tokenise') return protection;
  return {
    kind: protection.kind,
    method: protection.method,
    immediate: protection.immediate,
    protect: (value) => (typeof protection.unprotect(value) === 'string' ? value : protection.protect(value)),
    unprotect: (value) => protection.unprotect(value),
    ...(protection.unprotectInPlace === undefined ? {} : { unprotectInPlace: protection.unprotectInPlace }),
  };
}

type ProtectArgs = Parameters<Engine['protect']>;

/** Indexes of the string elements that unprotect without a discrepancy (none when unprotect refuses the call). */
async function genuineIndexes(engine: Engine, kind: string, data: ProtectArgs[1], options: ProtectArgs[2]): Promise<Set<number>> {
  if (data.some((value) => typeof value !== 'string')) return new Set();
  let response: ProtectionResponse;
  try {
    response = await engine.unprotect(kind, data, options);
  } catch {
    return new Set(); // protect refuses such a call in its own words
  }
  const genuine = new Set(data.keys());
  for (const index of [...(response.discrepancy?.invalid_token ?? []), ...(response.discrepancy?.invalid_scope ?? [])]) genuine.delete(index);
  return genuine;
}

/** protect of the elements `indexes`, its refusal naming them by their place in `data`. */
async function protectSome(engine: Engine, kind: string, data: ProtectArgs[1], options: ProtectArgs[2], indexes: readonly number[]): Promise<ProtectionResponse> {
  try {
    return await engine.protect(kind, indexes.map((index) => data[index]), options);
  } catch (error) {
    if (!(error instanceof ProtectionError) || error.indexes === undefined) throw error;
    throw new ProtectionError(error.code, error.message, error.indexes.map((index) => indexes[index] as number));
  }
}
