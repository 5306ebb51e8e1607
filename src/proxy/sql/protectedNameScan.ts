/**
 * Spots a protected table's name in raw text pgveil cannot analyse (a DO block, a function body, a
 * text the parser rejects, the query of a COPY TO): a case-insensitive word match, "quoted" and
 * qualified names included, with whitespace or comments around the dot. Strings and comments are
 * scanned too — a dynamic `EXECUTE 'INSERT INTO customers …'` hides there. The scan fails closed:
 * text inside a quoted name or a comment is scanned again as code (a `'"'` literal must not hide
 * the name after it), and every bare word of the text counts as well.
 */
import { escapedSpellings, mayHoldEscapes } from './escapedSpellings.js';
import type { RelationLookup, TableInfo } from './relationLookup.js';
import type { ProtectedSchema } from './sqlAnalysisTypes.js';

/**
 * A comment, a "quoted" name or a bare word. A comment ends at its first `*\/` or, unterminated, at
 * the end of the text: a lazy search for an end that never comes made each `/*` rescan the rest.
 */
const TOKEN = /\/\*(?:[^*]|\*(?!\/))*(?:\*\/|$)|--[^\n]*|"((?:[^"]|"")+)"|[\p{L}_][\p{L}\p{N}_$]*/gu;
const BARE = /[\p{L}_][\p{L}\p{N}_$]*/gu;
/**
 * What may stand between a schema name and its table's: whitespace, comments, one dot. A comment
 * cannot run past its first `*\/`, so each character belongs to one alternative: the match is
 * linear (a lazy `[\s\S]*?` here let a row of comments backtrack exponentially).
 */
const GAP_PART = String.raw`(?:\s|/\*(?:[^*]|\*(?!/))*\*/|--[^\n]*(?:\n|$))*`;
const QUALIFYING_GAP = new RegExp(`^${GAP_PART}\\.${GAP_PART}$`);
const BARE_GAP = /^\s*\.\s*$/;
/** How deep quoted names and comments are scanned again as code. */
const MAX_DEPTH = 4;

interface Word {
  readonly name: string;
  readonly quoted: boolean;
  /** The word that follows it across a dot, when the two read as `schema.table`. */
  readonly next?: Word;
}

interface Token {
  readonly name: string;
  readonly quoted: boolean;
  readonly start: number;
  readonly end: number;
}

function linked(text: string, tokens: readonly Token[], gap: RegExp, into: Word[]): void {
  let next: Word | undefined;
  const words: Word[] = [];
  for (let index = tokens.length - 1; index >= 0; index--) {
    const token = tokens[index] as Token;
    const following = tokens[index + 1];
    const qualifies = following !== undefined && next !== undefined && gap.test(text.slice(token.end, following.start));
    const word: Word = qualifies ? { name: token.name, quoted: token.quoted, next } : { name: token.name, quoted: token.quoted };
    words.push(word);
    next = word;
  }
  into.push(...words.reverse());
}

function scan(text: string, depth: number, into: Word[]): void {
  const tokens: Token[] = [];
  const inner: string[] = [];
  for (const match of text.matchAll(TOKEN)) {
    const raw = match[0];
    const start = match.index;
    if (raw.startsWith('/*') || raw.startsWith('--')) {
      inner.push(raw.slice(2, raw.startsWith('/*') && raw.endsWith('*/') && raw.length >= 4 ? -2 : undefined));
      continue;
    }
    const quoted = match[1] !== undefined;
    if (quoted) inner.push(match[1] as string);
    tokens.push({ name: quoted ? (match[1] as string).replace(/""/g, '"') : raw, quoted, start, end: start + raw.length });
  }
  linked(text, tokens, QUALIFYING_GAP, into);
  if (depth < MAX_DEPTH) for (const part of inner) scan(part, depth + 1, into);
}

/** What the scan says of a text whose escapes are more than it decodes (escapedSpellings). */
const UNDECODED_NAME = '(a name its escapes may spell: they nest deeper, or name more escape characters, than pgveil decodes)';

/**
 * The words of `text` that could name a table, each with the word it qualifies, if any — in the
 * text as written and in each reading its escapes may give (`E'…'`, `U&"…"`: escapedSpellings.ts);
 * undefined when those readings cannot be told (the text may then name any table).
 */
function wordsOf(text: string): Word[] | undefined {
  const spellings = escapedSpellings(text);
  if (spellings.undecodable) return undefined;
  const words: Word[] = [];
  for (const reading of [text, ...spellings.readings]) {
    scan(reading, 0, words);
    const bare: Token[] = [];
    for (const match of reading.matchAll(BARE)) bare.push({ name: match[0], quoted: false, start: match.index, end: match.index + match[0].length });
    linked(reading, bare, BARE_GAP, words);
  }
  return words;
}

/** The first of `names` (any case) that `text` names as a word or "quoted" name, as listed. */
export function findListedTableMention(text: string, names: Iterable<string>): string | undefined {
  return listedMention(text, names)?.listed;
}

/** Names by their lower case, and whether `mayAppearIn` can rule a text out by a substring search. */
interface ListedNames {
  readonly byKey: ReadonlyMap<string, string>;
  /** The keys; undefined when one holds `"` (a "quoted" name may spell it as `""`). */
  readonly plainKeys: readonly string[] | undefined;
}

/** Frozen name lists (ColumnPolicies keeps one per catalog and policies) → their keys. */
const listedSets = new WeakMap<object, ListedNames>();

function listedNames(names: Iterable<string>): ListedNames {
  // Only a frozen list cannot change after its keys were taken.
  const frozen = Object.isFrozen(names);
  const known = frozen ? listedSets.get(names) : undefined;
  if (known !== undefined) return known;
  const byKey = new Map<string, string>();
  for (const name of names) if (!byKey.has(name.toLowerCase())) byKey.set(name.toLowerCase(), name);
  const keys = [...byKey.keys()];
  const listed = { byKey, plainKeys: keys.some((key) => key.includes('"')) ? undefined : keys };
  if (frozen) listedSets.set(names, listed);
  return listed;
}

/** More keys than this: the full scan is cheaper than one substring search per key. */
const MAX_SEARCHED_KEYS = 64;
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * False when no word of `text` can be one of the names. Every word the scan reports is a piece of
 * the text, except that a "quoted" name turns `""` into `"`; in ASCII text lower case is per
 * character, so a word whose lower case is a key (one without `"`) leaves that key in the text's
 * lower case. Other texts (escapes included: `\x63`, `U&"\0063…"`), and long lists, are left to the scan.
 */
function mayAppearIn(text: string, listed: ListedNames): boolean {
  const keys = listed.plainKeys;
  if (keys === undefined || keys.length > MAX_SEARCHED_KEYS || NON_ASCII.test(text) || mayHoldEscapes(text)) return true;
  const lower = text.toLowerCase();
  return keys.some((key) => lower.includes(key));
}

/** `findListedTableMention` by the scan alone, without the substring check before it (for tests). */
export function scanListedTableMention(text: string, names: Iterable<string>): string | undefined {
  return scannedMention(text, listedNames(names))?.listed;
}

function listedMention(text: string, names: Iterable<string>): { written: string; listed: string } | undefined {
  const listed = listedNames(names);
  if (listed.byKey.size === 0 || !mayAppearIn(text, listed)) return undefined;
  return scannedMention(text, listed);
}

function scannedMention(text: string, listed: ListedNames): { written: string; listed: string } | undefined {
  const words = wordsOf(text);
  if (words === undefined) {
    const [first] = listed.byKey.values();
    return first === undefined ? undefined : { written: UNDECODED_NAME, listed: first };
  }
  for (const word of words) {
    const name = listed.byKey.get(word.name.toLowerCase());
    if (name !== undefined) return { written: word.name, listed: name };
  }
  return undefined;
}

/** The first protected table the text names (as `schema.table` or as written), if any. */
export function findProtectedTableMention(text: string, schema: ProtectedSchema, relations: RelationLookup): string | undefined {
  return findTableMention(text, schema.protectedTableNames?.(), relations, (info) => info.hasProtectedColumns);
}

/** The first relation with plaintext-at-rest columns (ProtectedSchema.plaintextSource) the text names. */
export function findPlaintextTableMention(text: string, schema: ProtectedSchema, relations: RelationLookup): string | undefined {
  if (schema.plaintextSource === undefined) return undefined;
  return findTableMention(text, schema.plaintextTableNames?.(), relations, (info) => info.columns.some((column) => column.plaintext !== undefined));
}

function findTableMention(
  text: string, listed: Iterable<string> | undefined, relations: RelationLookup, matches: (info: TableInfo) => boolean,
): string | undefined {
  if (listed !== undefined) return listedMention(text, listed)?.written;
  const asked = new Set<string>();
  const probe = (schemaName: string | undefined, tableName: string): string | undefined => {
    const key = `${schemaName ?? ''}.${tableName}`;
    if (asked.has(key)) return undefined;
    asked.add(key);
    const info = relations.table(schemaName, tableName);
    return info !== undefined && matches(info) ? `${info.schema}.${info.table}` : undefined;
  };
  const words = wordsOf(text);
  if (words === undefined) return UNDECODED_NAME;
  for (const word of words) {
    const spellings = word.quoted ? [word.name, word.name.toLowerCase()] : [word.name.toLowerCase(), word.name];
    const next = word.next;
    for (const spelling of spellings) {
      const found = probe(undefined, spelling)
        ?? (next !== undefined ? probe(spelling, next.quoted ? next.name : next.name.toLowerCase()) : undefined);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
