/**
 * Which base column each plain column of a view shows, read from the view's stored rule
 * (pg_rewrite.ev_action, PostgreSQL's nodeToString text): the top-level query's target entries
 * carry `resorigtbl`/`resorigcol` for columns that are a bare column reference. That is what lets
 * writes through an auto-updatable view, and reads of one, follow the base column's policy.
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

/** View attnum → base (relation oid, attnum), for the view's plain column references. */
export function viewColumnOrigins(action: string): Map<number, { oid: number; attnum: number }> {
  const origins = new Map<number, { oid: number; attnum: number }>();
  const tokens = tokenize(action);
  const queryAt = tokens.findIndex((token) => token.text === 'QUERY');
  if (queryAt < 0) return origins;
  const queryDepth = (tokens[queryAt] as Token).depth;
  const listAt = tokens.findIndex((token, index) => index > queryAt && token.depth === queryDepth && token.text === ':targetList');
  if (listAt < 0) return origins;
  const entryDepth = queryDepth + 2; // inside the list's `(` and the entry's `{`
  let entry = new Map<string, string>();
  for (let i = listAt + 2; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.depth <= queryDepth) break; // the list closed
    if (token.text === '{' && token.depth === entryDepth) entry = new Map();
    if (token.depth === entryDepth && token.text.startsWith(':')) {
      const value = tokens[i + 1];
      if (value !== undefined && value.depth === entryDepth) entry.set(token.text, value.text);
    }
    if (token.text === '}' && token.depth === entryDepth) {
      const resno = Number(entry.get(':resno'));
      const oid = Number(entry.get(':resorigtbl'));
      const attnum = Number(entry.get(':resorigcol'));
      if (entry.get(':resjunk') !== 'true' && resno > 0 && oid > 0 && attnum > 0) origins.set(resno, { oid, attnum });
    }
  }
  return origins;
}
