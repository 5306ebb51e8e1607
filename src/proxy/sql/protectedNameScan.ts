/**
 * Spots a protected table's name in raw text pgveil cannot analyse (a DO block, a function body, a
 * text the parser rejects): a case-insensitive word match, qualified names included. Strings and
 * comments are scanned too — a dynamic `EXECUTE 'INSERT INTO customers …'` hides there.
 */
import type { RelationLookup, TableInfo } from './relationLookup.js';
import type { ProtectedSchema } from './sqlAnalysisTypes.js';

const WORD = /"((?:[^"]|"")+)"|[\p{L}_][\p{L}\p{N}_$]*/gu;

interface Word {
  readonly name: string;
  readonly quoted: boolean;
  readonly start: number;
  readonly end: number;
}

function wordsOf(text: string): Word[] {
  const words: Word[] = [];
  for (const match of text.matchAll(WORD)) {
    const quoted = match[1] !== undefined;
    const name = quoted ? (match[1] as string).replace(/""/g, '"') : match[0];
    const start = match.index;
    words.push({ name, quoted, start, end: start + match[0].length });
  }
  return words;
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
  const words = wordsOf(text);
  if (listed !== undefined) {
    const names = new Set<string>();
    for (const name of listed) names.add(name.toLowerCase());
    return words.find((word) => names.has(word.name.toLowerCase()))?.name;
  }
  const asked = new Set<string>();
  const probe = (schemaName: string | undefined, tableName: string): string | undefined => {
    const key = `${schemaName ?? ''}.${tableName}`;
    if (asked.has(key)) return undefined;
    asked.add(key);
    const info = relations.table(schemaName, tableName);
    return info !== undefined && matches(info) ? `${info.schema}.${info.table}` : undefined;
  };
  for (let index = 0; index < words.length; index++) {
    const word = words[index] as Word;
    const spellings = word.quoted ? [word.name, word.name.toLowerCase()] : [word.name.toLowerCase(), word.name];
    const next = words[index + 1];
    const qualifies = next !== undefined && /^\s*\.\s*$/.test(text.slice(word.end, next.start));
    for (const spelling of spellings) {
      const found = probe(undefined, spelling)
        ?? (qualifies ? probe(spelling, next.quoted ? next.name : next.name.toLowerCase()) : undefined);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
