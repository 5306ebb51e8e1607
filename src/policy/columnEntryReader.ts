import { ROLE_NAME, type KeyPath } from '../config/index.js';
import {
  MAX_NOISE, MAX_SCOPE_BYTES, DEFAULT_METHOD, DEFAULT_SCOPE, KINDS, LANG_KINDS, LANGS, METHODS,
  REVERSIBLE_METHODS, isKind, isLang, isMethod, type Method,
} from '../engine/index.js';
import { quoteValue, type IssueCollector } from './issueCollector.js';
import {
  DEFAULT_VIEW, OTHER_ROLES, REVEAL_VIEWS,
  type ColumnEngineOptions, type ColumnPolicy, type RevealView,
} from './policyTypes.js';

export const COLUMN_KEYS = ['kind', 'method', 'scope', 'noise', 'lang', 'reveal'] as const;

/** A column entry that passed the static checks, before it gets its place in the set. */
export type ColumnEntry = Omit<ColumnPolicy, 'schema' | 'table' | 'column' | 'key' | 'source'>;

function isRevealView(value: unknown): value is RevealView {
  return typeof value === 'string' && (REVEAL_VIEWS as readonly string[]).includes(value);
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads one enumerated value; reports a missing required or an unknown one with the choices. */
function readChoice<T extends string>(
  issues: IssueCollector, entry: Record<string, unknown>, key: string, path: KeyPath,
  choices: readonly T[], isChoice: (v: unknown) => v is T, required: boolean,
): T | undefined | null {
  const value = entry[key];
  if (value === undefined || value === null) {
    if (required) issues.add([...path, key], `is required; valid: ${choices.join(', ')}`);
    return required ? null : undefined;
  }
  if (!isChoice(value)) {
    issues.add([...path, key], `unknown ${key} ${quoteValue(value)}; valid: ${choices.join(', ')}`);
    return null;
  }
  return value;
}

function readScope(issues: IssueCollector, entry: Record<string, unknown>, path: KeyPath): string | null {
  const value = entry['scope'];
  if (value === undefined || value === null) return DEFAULT_SCOPE;
  if (typeof value !== 'string' || value.length === 0 || Buffer.byteLength(value) > MAX_SCOPE_BYTES) {
    issues.add([...path, 'scope'], `must be a non-empty string of at most ${MAX_SCOPE_BYTES} bytes (quote numbers: scope: "2024")`);
    return null;
  }
  return value;
}

function readNoise(issues: IssueCollector, entry: Record<string, unknown>, path: KeyPath): number | null {
  const value = entry['noise'];
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_NOISE) {
    issues.add([...path, 'noise'], `must be a non-negative integer (0 to ${MAX_NOISE}); got ${quoteValue(value)}`);
    return null;
  }
  return value;
}

function readReveal(
  issues: IssueCollector, entry: Record<string, unknown>, path: KeyPath, method: Method | null,
): { reveal: Map<string, RevealView>; otherRoles: RevealView } | null {
  const value = entry['reveal'];
  const reveal = new Map<string, RevealView>();
  let otherRoles = DEFAULT_VIEW;
  if (value === undefined || value === null) return { reveal, otherRoles };
  const rp: KeyPath = [...path, 'reveal'];
  if (!isMapping(value)) {
    issues.add(rp, `must be a mapping of role to view (${REVEAL_VIEWS.join(', ')}), e.g. { app: plaintext, support: mask }`);
    return null;
  }
  let ok = true;
  for (const [role, view] of Object.entries(value)) {
    if (role !== OTHER_ROLES && !ROLE_NAME.test(role)) {
      issues.add([...rp, role], `${quoteValue(role)} is not a role name (1-64 letters, digits, _ . : -); "*" stands for every role not listed`, { atKey: true });
      ok = false;
      continue;
    }
    if (!isRevealView(view)) {
      issues.add([...rp, role], `unknown view ${quoteValue(view)}; valid: ${REVEAL_VIEWS.join(', ')}`);
      ok = false;
      continue;
    }
    if (method !== null && !oneWayAllows(issues, [...rp, role], method, view)) {
      ok = false;
      continue;
    }
    if (role === OTHER_ROLES) otherRoles = view;
    else reveal.set(role, view);
  }
  return ok ? { reveal, otherRoles } : null;
}

/** A one-way method stores no plaintext: nothing can reveal it, and redact leaves nothing to mask. */
function oneWayAllows(issues: IssueCollector, path: KeyPath, method: Method, view: RevealView): boolean {
  if (view === 'plaintext' && !REVERSIBLE_METHODS.has(method)) {
    issues.add(path, `cannot be plaintext: method ${method} is one-way, so the database keeps no plaintext to reveal. `
      + 'Use method fpe or tokenise (reversible), or method passthrough with mask for the roles that must not see plaintext');
    return false;
  }
  if (view === 'mask' && method === 'redact') {
    issues.add(path, 'cannot be mask: method redact keeps only the layout, so there is nothing to mask on read. '
      + 'Use token (the redacted value) or redact (NULL), or method mask');
    return false;
  }
  return true;
}

/**
 * Checks one `columns` entry: known keys, kind/method/lang/view values, noise and scope ranges,
 * and the combinations the engine refuses. Returns undefined when anything is wrong (the issues
 * say what); warnings do not stop it.
 */
export function readColumnEntry(issues: IssueCollector, value: unknown, path: KeyPath): ColumnEntry | undefined {
  if (!isMapping(value)) {
    issues.add(path, `must be a mapping with ${COLUMN_KEYS.join(', ')} (kind is required)`);
    return undefined;
  }
  let ok = true;
  for (const key of Object.keys(value)) {
    if (!(COLUMN_KEYS as readonly string[]).includes(key)) {
      issues.add([...path, key], `unknown key ${quoteValue(key)}; valid: ${COLUMN_KEYS.join(', ')}`, { atKey: true });
      ok = false;
    }
  }
  const kind = readChoice(issues, value, 'kind', path, KINDS, isKind, true);
  // undefined: absent, so the default; null: given but wrong (already reported).
  const givenMethod = readChoice(issues, value, 'method', path, METHODS, isMethod, false);
  const method = givenMethod === undefined ? DEFAULT_METHOD : givenMethod;
  const scope = readScope(issues, value, path);
  const noise = readNoise(issues, value, path);
  const lang = readChoice(issues, value, 'lang', path, LANGS, isLang, false);
  const reveal = readReveal(issues, value, path, method);

  if (noise !== null && noise > 0 && method !== null) {
    if (method !== 'tokenise') {
      issues.add([...path, 'noise'], `noise applies to method tokenise only; ${method} is deterministic. Remove noise or use method tokenise`);
      ok = false;
    } else {
      issues.warn([...path, 'noise'], `noise ${noise} gives a value a new token on every write: equality search on this column `
        + '(WHERE col = ..., IN, joins, GROUP BY, unique constraints) stops working. Use noise 0 if the column is searched');
    }
  }
  if (lang && kind && !LANG_KINDS.has(kind)) {
    issues.add([...path, 'lang'], `lang applies only to kinds ${[...LANG_KINDS].join(', ')}; ${kind} has none. Remove it`);
    ok = false;
  }
  if (method === 'passthrough' && reveal && reveal.otherRoles === 'token') {
    issues.warn([...path, 'method'], 'method passthrough stores plaintext, and roles not listed in reveal see the value as stored: '
      + 'plaintext. Add "*": mask (or redact) to reveal to hide it from them');
  }
  if (!ok || !kind || !method || scope === null || noise === null || lang === null || !reveal) return undefined;

  const engineOptions: ColumnEngineOptions = lang
    ? Object.freeze({ method, scope, noise, lang })
    : Object.freeze({ method, scope, noise });
  const entry: ColumnEntry = { kind, method, scope, noise, reveal: reveal.reveal, otherRoles: reveal.otherRoles, engineOptions };
  return lang ? { ...entry, lang } : entry;
}
