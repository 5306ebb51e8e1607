/**
 * Which base column each plain column of a view shows, read from the view's stored rule
 * (pg_rewrite.ev_action, PostgreSQL's nodeToString text): the top-level query's target entries
 * carry `resorigtbl`/`resorigcol` for columns that are a bare column reference. That is what lets
 * writes through an auto-updatable view, and reads of one, follow the base column's policy. For
 * the other (computed) columns, which base columns they read: a view expression over a column
 * stored in plaintext would otherwise show it unmasked.
 */

interface Token {
  readonly text: string;
  /** Nesting depth of `{…}` and `(…)` at the token (after an opening bracket, before a closing one). */
  readonly depth: number;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let depth = 0;
  let current = '';
  let currentDepth = 0;
  const end = (): void => {
    if (current !== '') tokens.push({ text: current, depth: currentDepth });
    current = '';
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '\\') {
      if (current === '') currentDepth = depth;
      current += text[i + 1] ?? '';
      i++;
    } else if (ch === '{' || ch === '(') {
      end();
      depth++;
      tokens.push({ text: ch, depth });
    } else if (ch === '}' || ch === ')') {
      end();
      tokens.push({ text: ch, depth });
      depth--;
    } else if (ch === ' ' || ch === '\n' || ch === '\t') {
      end();
    } else {
      if (current === '') currentDepth = depth;
      current += ch;
    }
  }
  end();
  return tokens;
}

/** A column of a relation; attnum 0 stands for the whole row (every column). */
export interface AttributeRef {
  readonly oid: number;
  readonly attnum: number;
}

interface ListEntry {
  /** The entry's own `:field value` pairs (not those of nested nodes). */
  readonly fields: ReadonlyMap<string, string>;
  /** Every token of the entry, nested nodes included. */
  readonly tokens: readonly Token[];
}

/** The entries of a list field (`:targetList`, `:rtable`) of the rule's top-level query. */
function topLevelList(tokens: readonly Token[], field: string): ListEntry[] {
  const entries: ListEntry[] = [];
  const queryAt = tokens.findIndex((token) => token.text === 'QUERY');
  if (queryAt < 0) return entries;
  const queryDepth = (tokens[queryAt] as Token).depth;
  const listAt = tokens.findIndex((token, index) => index > queryAt && token.depth === queryDepth && token.text === field);
  if (listAt < 0) return entries;
  const entryDepth = queryDepth + 2; // inside the list's `(` and the entry's `{`
  let fields = new Map<string, string>();
  let entryTokens: Token[] = [];
  for (let i = listAt + 2; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.depth <= queryDepth) break; // the list closed
    if (token.text === '{' && token.depth === entryDepth) {
      fields = new Map();
      entryTokens = [];
    }
    entryTokens.push(token);
    if (token.depth === entryDepth && token.text.startsWith(':')) {
      const value = tokens[i + 1];
      if (value !== undefined && value.depth === entryDepth) fields.set(token.text, value.text);
    }
    if (token.text === '}' && token.depth === entryDepth) entries.push({ fields, tokens: entryTokens });
  }
  return entries;
}

function isResultColumn(entry: ListEntry): boolean {
  return entry.fields.get(':resjunk') !== 'true' && Number(entry.fields.get(':resno')) > 0;
}

/** View attnum → base (relation oid, attnum), for the view's plain column references. */
export function viewColumnOrigins(action: string): Map<number, AttributeRef> {
  const origins = new Map<number, AttributeRef>();
  for (const entry of topLevelList(tokenize(action), ':targetList')) {
    const resno = Number(entry.fields.get(':resno'));
    const oid = Number(entry.fields.get(':resorigtbl'));
    const attnum = Number(entry.fields.get(':resorigcol'));
    if (isResultColumn(entry) && oid > 0 && attnum > 0) origins.set(resno, { oid, attnum });
  }
  return origins;
}

/**
 * View attnum → the base columns each computed (non-plain) view column reads, for expressions
 * whose column references all point at base relations of the view's own FROM list; `unknown`
 * when the expression holds a subquery or reads through a join or subquery (the caller then
 * assumes every column the view depends on). A constant reads nothing.
 */
export function viewComputedSources(action: string): Map<number, readonly AttributeRef[] | 'unknown'> {
  const tokens = tokenize(action);
  const rtable = topLevelList(tokens, ':rtable').map((entry) => ({
    relation: entry.fields.get(':rtekind') === '0', oid: Number(entry.fields.get(':relid')),
  }));
  const computed = new Map<number, readonly AttributeRef[] | 'unknown'>();
  for (const entry of topLevelList(tokens, ':targetList')) {
    if (!isResultColumn(entry) || Number(entry.fields.get(':resorigtbl')) > 0) continue;
    const sources: AttributeRef[] = [];
    let unknown = false;
    entry.tokens.forEach((token, index) => {
      if (token.text === 'SUBLINK') unknown = true;
      if (token.text !== 'VAR' || entry.tokens[index - 1]?.text !== '{') return;
      const fields = nodeFields(entry.tokens, index, token.depth);
      const rte = rtable[Number(fields.get(':varno')) - 1];
      if (Number(fields.get(':varlevelsup') ?? '0') !== 0 || rte === undefined || !rte.relation || !(rte.oid > 0)) unknown = true;
      else sources.push({ oid: rte.oid, attnum: Number(fields.get(':varattno')) });
    });
    computed.set(Number(entry.fields.get(':resno')), unknown ? 'unknown' : sources);
  }
  return computed;
}

/** The `:field value` pairs of the node whose type name is at `at` (depth `depth`). */
function nodeFields(tokens: readonly Token[], at: number, depth: number): Map<string, string> {
  const fields = new Map<string, string>();
  for (let i = at + 1; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.text === '}' && token.depth === depth) break;
    const value = tokens[i + 1];
    if (token.depth === depth && token.text.startsWith(':') && value !== undefined && value.depth === depth) fields.set(token.text, value.text);
  }
  return fields;
}
