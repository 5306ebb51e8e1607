import type { Kind, Method } from '../engine/index.js';
import { isTextFamily, type ColumnType, type TypeFamily } from './columnType.js';
import type { IssueSeverity } from './policyError.js';
import type { ColumnPolicy } from './policyTypes.js';
import { effectiveView } from './revealView.js';
import { estimateTokenSize, exampleOutput } from './tokenSizing.js';

/**
 * Which column types can hold what a method stores, per kind. Every method's output fits
 * text/varchar/char (of sufficient length); typed columns hold only what stays valid for them:
 * - fpe keeps a date a date, an ipv4 a valid inet (not cidr: host bits are encrypted too), a uuid
 *   a uuid, a numeric/price/latlng the same digits and sign, so numeric. Not float (its text form
 *   drops trailing zeros, so the value would not decrypt) nor integers (the same digit count can
 *   overflow them).
 * - mask keeps a date a date (01-01 of its year), an ipv4 an address (x.y.0.0, a valid cidr too),
 *   a uuid a uuid, a number a smaller number of the same type. Other kinds mask with "*".
 * - tokenise and redact store text only.
 */
const FPE_FAMILIES: Readonly<Partial<Record<Kind, readonly TypeFamily[]>>> = {
  date: ['date'], ipv4: ['inet'], uuid: ['uuid'], numeric: ['numeric'], price: ['numeric'], latlng: ['numeric'],
};
const MASK_FAMILIES: Readonly<Partial<Record<Kind, readonly TypeFamily[]>>> = {
  date: ['date'], ipv4: ['inet', 'cidr'], uuid: ['uuid'],
  numeric: ['numeric', 'integer'], price: ['numeric', 'integer'], latlng: ['numeric', 'integer'],
};

/** fpe output can be longer than its input only for ipv4 (10.0.0.1 → 203.117.64.211). */
const FPE_MIN_LENGTH: Readonly<Partial<Record<Kind, number>>> = { ipv4: 15, uuid: 36 };

const NUMBER_KINDS: ReadonlySet<Kind> = new Set(['numeric', 'price', 'latlng']);

export interface StorageFinding {
  readonly severity: IssueSeverity;
  readonly message: string;
}

/** "a date", "an inet", "an integer". */
function withArticle(type: string): string {
  return `${/^[aeio]/i.test(type) ? 'an' : 'a'} ${type}`; // "a uuid": u sounds like you
}

/** Typed families (besides text) that `method` at rest keeps valid for `kind`. */
export function typedFamilies(method: Method, kind: Kind): readonly TypeFamily[] {
  if (method === 'fpe') return FPE_FAMILIES[kind] ?? [];
  if (method === 'mask') return MASK_FAMILIES[kind] ?? [];
  return [];
}

function fits(method: Method, kind: Kind, type: ColumnType): boolean {
  return method === 'passthrough' || isTextFamily(type) || typedFamilies(method, kind).includes(type.family);
}

/** "use method fpe to keep a date, or change the column to text", or the nearest advice. */
function fpeOrText(kind: Kind, type: ColumnType): string {
  if (fits('fpe', kind, type)) return `use method fpe to keep ${withArticle(type.display)}, or change the column to text`;
  const other = FPE_FAMILIES[kind]?.[0];
  if (other) return `change the column to ${other} and use method fpe, or change it to text`;
  return 'change the column to text';
}

async function typeMismatch(policy: ColumnPolicy, type: ColumnType): Promise<string> {
  const { kind, method } = policy;
  const t = type.display;
  switch (method) {
    case 'tokenise':
      return `tokens are text, longer than the value, and do not fit ${withArticle(t)} column; ${fpeOrText(kind, type)}`;
    case 'fpe':
      if (kind === 'ipv4' && type.family === 'cidr') {
        return 'fpe encrypts the host bits too, so a cidr value would not stay a valid cidr; change the column to inet or text';
      }
      if (NUMBER_KINDS.has(kind) && type.family === 'integer') {
        return `fpe keeps the digit count, which can overflow ${t} (a large value may encrypt past its maximum); change the column to numeric or text`;
      }
      if (NUMBER_KINDS.has(kind) && type.family === 'float') {
        return `${t} drops trailing zeros and uses exponents, so fpe values would not decrypt; change the column to numeric or text`;
      }
      return `fpe output of kind ${kind} is not a valid ${t}; change the column to ${[...(FPE_FAMILIES[kind] ?? []), 'text'].join(' or ')}`;
    case 'mask':
    case 'redact': {
      const example = JSON.stringify(await exampleOutput(kind, method));
      const view = method === 'mask' ? 'mask' : 'redact (NULL)';
      const instead = fits('fpe', kind, type)
        ? `use method fpe (keeps ${withArticle(t)}) with reveal ${view} for the roles concerned, or change the column to text`
        : 'change the column to text';
      return `${method} output of kind ${kind} (e.g. ${example}) is not a valid ${t}; ${instead}`;
    }
    case 'passthrough':
      return '';
  }
}

async function lengthProblem(policy: ColumnPolicy, type: ColumnType): Promise<string | undefined> {
  const max = type.maxLength;
  if (max === undefined || !isTextFamily(type)) return undefined;
  const { kind, method, noise, lang } = policy;
  if (method === 'tokenise') {
    const size = await estimateTokenSize(kind, max, noise, lang);
    if (size.tokenLength <= max) return undefined;
    return `${type.display} is too short for tokens of kind ${kind}: a ${size.sampleLength}-character value takes a `
      + `${size.tokenLength}-character token${noise > 0 ? ` with noise ${noise}` : ''}. Make the column varchar(${size.tokenLength}) `
      + 'or longer, or text, or use method fpe (keeps the length)';
  }
  const min = method === 'fpe' ? FPE_MIN_LENGTH[kind] : undefined;
  if (min !== undefined && max < min) {
    return `${type.display} is too short for fpe of kind ${kind}: outputs take up to ${min} characters`
      + `${kind === 'ipv4' ? ' (18 with a /prefix)' : ''}; make the column varchar(${kind === 'ipv4' ? 18 : min}) or longer, or ${kind === 'ipv4' ? 'inet' : kind}, or text`;
  }
  return undefined;
}

/** Whether any role (listed or not) sees the kind's mask computed on read. */
function hasMaskView(policy: ColumnPolicy): boolean {
  const views = [...policy.reveal.values(), policy.otherRoles];
  return views.some((v) => effectiveView(policy, v) === 'mask');
}

/**
 * What is wrong with storing `policy`'s column in a column of `type`: errors when the stored
 * values would not fit (PostgreSQL would refuse the write, or the value would not come back),
 * warnings when reads may surprise clients. Each message says what to do instead.
 */
export async function checkStorage(policy: ColumnPolicy, type: ColumnType): Promise<StorageFinding[]> {
  const findings: StorageFinding[] = [];
  const { method, kind } = policy;
  if (type.family === 'array' && method !== 'passthrough') {
    findings.push({ severity: 'error', message: `${type.display} is an array: pgveil protects single values; store one value per row, or use method passthrough` });
    return findings;
  }
  if (!fits(method, kind, type)) {
    findings.push({ severity: 'error', message: await typeMismatch(policy, type) });
    return findings;
  }
  const tooShort = await lengthProblem(policy, type);
  if (tooShort) findings.push({ severity: 'error', message: tooShort });
  if (type.family === 'char' && method === 'tokenise') {
    findings.push({ severity: 'warning', message: `${type.display} pads tokens shorter than its length with spaces, which come back on read; prefer varchar or text` });
  }
  if (hasMaskView(policy) && !isTextFamily(type) && !(MASK_FAMILIES[kind] ?? []).includes(type.family)) {
    const example = JSON.stringify(await exampleOutput(kind, 'mask'));
    findings.push({
      severity: 'warning',
      message: `roles that see mask get the mask of kind ${kind} (e.g. ${example}), which is not a valid ${type.display}: `
        + 'clients that parse the type may fail. Give them redact, or change the column to text',
    });
  }
  return findings;
}
