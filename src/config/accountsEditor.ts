import { isMap, isScalar, isSeq, parseDocument, stringify, YAMLSeq, type Document } from 'yaml';
import { normaliseEmail } from './accountsSection.js';
import type { AccountConfig } from './configTypes.js';

export class AccountExistsError extends Error {
  override readonly name = 'AccountExistsError';
}

/**
 * Appends an account to configuration text. Where the accounts list is a block list (or absent),
 * the new item is spliced in as text, so every other byte of the file — comments, blank lines,
 * indentation, flow style — stays as the operator wrote it. The account carries hashes only; the
 * caller shows the secrets once and forgets them.
 */
export function addAccountToConfigText(text: string, account: AccountConfig): string {
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0) throw new Error('the configuration file is not valid YAML; fix it first');
  if (doc.contents !== null && !isMap(doc.contents)) {
    throw new Error('the configuration file must be a mapping of sections');
  }
  const entry = accountEntry(account);
  const seq = doc.get('accounts', true);
  const absent = seq === undefined || seq === null || (isScalar(seq) && seq.value === null);
  if (!absent && !isSeq(seq)) throw new Error('accounts in the configuration file must be a list');
  if (isSeq(seq)) refuseDuplicate(seq, entry.email);

  const spliced = absent && !doc.has('accounts') ? appendSection(text, entry)
    : isSeq(seq) && !seq.flow && seq.items.length > 0 ? appendToBlockList(text, seq, entry)
      : (absent || (isSeq(seq) && seq.items.length === 0)) ? fillEmptyList(text, seq as Ranged | null | undefined, entry)
        : undefined;
  if (spliced !== undefined && splicedAsExpected(spliced, doc, entry)) return spliced;
  return addThroughDocument(doc, entry);
}

interface AccountEntry {
  readonly email: string;
  readonly passwordHash: string;
  readonly apiKeyHash: string;
  readonly roles: readonly string[];
  readonly enabled: boolean;
}

function accountEntry(account: AccountConfig): AccountEntry {
  return {
    email: normaliseEmail(account.email),
    passwordHash: account.passwordHash,
    apiKeyHash: account.apiKeyHash,
    roles: account.roles,
    enabled: account.enabled,
  };
}

function refuseDuplicate(seq: YAMLSeq, email: string): void {
  for (const item of seq.items) {
    if (isMap(item) && normaliseEmail(String(item.get('email') ?? '')) === email) {
      throw new AccountExistsError(`an account with this email already exists: ${email}`);
    }
  }
}

/** The entry as block-list lines, `- ` at `dashIndent` columns and the keys at `keyIndent`. */
function entryLines(entry: AccountEntry, dashIndent: number, keyIndent: number): string {
  const roles = `[${entry.roles.map((role) => stringify(role).trimEnd()).join(', ')}]`;
  const fields = [
    `email: ${stringify(entry.email).trimEnd()}`,
    `passwordHash: ${stringify(entry.passwordHash).trimEnd()}`,
    `apiKeyHash: ${stringify(entry.apiKeyHash).trimEnd()}`,
    `roles: ${roles}`,
    `enabled: ${entry.enabled}`,
  ];
  const dash = `${' '.repeat(dashIndent)}-${' '.repeat(Math.max(1, keyIndent - dashIndent - 1))}`;
  return fields.map((field, index) => (index === 0 ? dash : ' '.repeat(keyIndent)) + field).join('\n') + '\n';
}

function appendSection(text: string, entry: AccountEntry): string {
  const separator = text.length === 0 || text.endsWith('\n') ? '' : '\n';
  return `${text}${separator}accounts:\n${entryLines(entry, 2, 4)}`;
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

type Ranged = { range?: [number, number, number] | null };

/**
 * `accounts: []`, `accounts: ~` or a bare `accounts:` becomes a block list: the empty value's text
 * goes, and the entry follows the key's line (its comment stays on it).
 */
function fillEmptyList(text: string, value: Ranged | null | undefined, entry: AccountEntry): string | undefined {
  const range = value?.range;
  if (range === undefined || range === null) return undefined;
  const start = lineStart(text, range[0]);
  const keyColumn = text.slice(start).search(/\S/);
  if (!text.startsWith('accounts', start + keyColumn)) return undefined;
  const withoutValue = text.slice(0, range[0]) + text.slice(range[1]);
  const lineEnd = withoutValue.indexOf('\n', range[0]);
  const at = lineEnd === -1 ? withoutValue.length : lineEnd + 1;
  const head = (lineEnd === -1 ? `${withoutValue}\n` : withoutValue.slice(0, at)).replace(/accounts:[ \t]+\n$/, 'accounts:\n');
  return head + entryLines(entry, keyColumn + 2, keyColumn + 4) + withoutValue.slice(at);
}

/** Inserts the entry after the list's last item, at the indentation its first item uses. */
function appendToBlockList(text: string, seq: YAMLSeq, entry: AccountEntry): string | undefined {
  const first = seq.items[0] as Ranged | undefined;
  const last = seq.items[seq.items.length - 1] as Ranged | undefined;
  if (seq.range === undefined || seq.range === null || first?.range == null || last?.range == null) return undefined;
  const dashIndent = seq.range[0] - lineStart(text, seq.range[0]);
  const keyIndent = first.range[0] - lineStart(text, first.range[0]);
  if (keyIndent <= dashIndent) return undefined;
  let valueEnd = last.range[1];
  while (valueEnd > 0 && /\s/.test(text.charAt(valueEnd - 1))) valueEnd -= 1;
  const lineEnd = text.indexOf('\n', valueEnd);
  const at = lineEnd === -1 ? text.length : lineEnd + 1;
  const before = lineEnd === -1 ? `${text}\n` : text.slice(0, at);
  return before + entryLines(entry, dashIndent, keyIndent) + text.slice(at);
}

/** A splice is kept only if the file still parses to the same sections plus this one account. */
function splicedAsExpected(spliced: string, original: Document, entry: AccountEntry): boolean {
  const next = parseDocument(spliced, { prettyErrors: false });
  if (next.errors.length > 0) return false;
  const before = original.toJS() as Record<string, unknown> | null;
  const after = next.toJS() as Record<string, unknown> | null;
  if (after === null || typeof after !== 'object') return false;
  const beforeAccounts = Array.isArray(before?.['accounts']) ? before['accounts'] as unknown[] : [];
  const expected = { ...(before ?? {}), accounts: [...beforeAccounts, { ...entry, roles: [...entry.roles] }] };
  return JSON.stringify(after) === JSON.stringify(expected);
}

function addThroughDocument(doc: Document, entry: AccountEntry): string {
  let seq = doc.get('accounts', true);
  if (!isSeq(seq)) {
    seq = new YAMLSeq();
    doc.set('accounts', seq);
  }
  const list = seq as YAMLSeq;
  list.flow = false;
  const node = doc.createNode({ ...entry, roles: [...entry.roles] });
  const roles = node.get('roles', true);
  if (isSeq(roles)) roles.flow = true;
  list.items.push(node);
  return doc.toString({ lineWidth: 0 });
}
