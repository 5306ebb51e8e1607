/**
 * A value for a tokenised column that is already one of that column's tokens (its kind and scope)
 * is refused. An analyst reads a tokenised column as its tokens, and BI tools send what they show
 * back: a drill-through compares the column with a token, result-set editing writes the row back
 * as read. Tokenised a second time, the token would find no row, or be stored as a token of a
 * token, silently. Kept as it is, a token read where the role sees tokens could be written into
 * another column of the same kind and scope that the role sees in plaintext: a copy the statement
 * rules refuse between columns. So the statement is refused, saying why. A tokenise token is told
 * from any other text by its tag and scope id (what unprotect checks); fpe ciphertext cannot be
 * told from plaintext.
 */
import type { Engine, ProtectionResponse, ValueProtection } from '../../../engine/index.js';
import { PolicyRefusal } from '../policyRefusal.js';

const INVALID_PARAMETER_VALUE = '22023';

function alreadyATokenRefusal(): PolicyRefusal {
  return new PolicyRefusal(INVALID_PARAMETER_VALUE, 'pgveil refused the statement: a value for a tokenised column is already one of its tokens '
    + '(pgveil protects plaintext, so the token would be stored as a token of a token, or find no row); give the plaintext, '
    + 'join on the column rather than copy its tokens, and leave columns you did not change out of an UPDATE');
}

/** The engine whose tokenise `protect` refuses a call holding a genuine token of the same options. */
export function refuseGenuineTokens(engine: Engine): Engine {
  return {
    async protect(kind, data, options) {
      if ((options?.method ?? 'tokenise') === 'tokenise' && data.length > 0 && await holdsGenuineToken(engine, kind, data, options)) {
        throw alreadyATokenRefusal();
      }
      return engine.protect(kind, data, options);
    },
    unprotect: (kind, data, options) => engine.unprotect(kind, data, options),
  };
}

/** One value at a time, as refuseGenuineTokens does for a batch. */
export function refuseGenuineToken(protection: ValueProtection): ValueProtection {
  if (protection.method !== 'tokenise') return protection;
  return {
    kind: protection.kind,
    method: protection.method,
    immediate: protection.immediate,
    protect: (value) => {
      if (typeof protection.unprotect(value) === 'string') throw alreadyATokenRefusal();
      return protection.protect(value);
    },
    unprotect: (value) => protection.unprotect(value),
    ...(protection.unprotectInPlace === undefined ? {} : { unprotectInPlace: protection.unprotectInPlace }),
  };
}

type ProtectArgs = Parameters<Engine['protect']>;

/** Whether a string element unprotects without a discrepancy (false when unprotect refuses the call: protect refuses it in its own words). */
async function holdsGenuineToken(engine: Engine, kind: string, data: ProtectArgs[1], options: ProtectArgs[2]): Promise<boolean> {
  if (data.some((value) => typeof value !== 'string')) return false;
  let response: ProtectionResponse;
  try {
    response = await engine.unprotect(kind, data, options);
  } catch {
    return false;
  }
  const failed = (response.discrepancy?.invalid_token?.length ?? 0) + (response.discrepancy?.invalid_scope?.length ?? 0);
  return failed < data.length;
}
