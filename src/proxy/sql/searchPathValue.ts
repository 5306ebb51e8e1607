/**
 * search_path values read the way PostgreSQL reads them, so that pgveil resolves unqualified
 * names against the same schema names the server does.
 *
 * - A value string (`"$user", public, "My Schema"`, as `set_config` or a role default gives it)
 *   is split like SplitIdentifierString: a comma-separated list; a double-quoted name is taken as
 *   written (`""` is one quote), a bare name is ASCII-downcased; whitespace around names is
 *   ignored; an empty bare name makes the whole value invalid (the server refuses it).
 * - SET arguments (`SET search_path TO a, "B", 'c d'`) are one name each: the server quotes every
 *   string argument before splitting, so `'a, b'` is a single schema called "a, b".
 *
 * Names are truncated to 63 bytes like identifiers. `$user` and `pg_temp` stay as written: the
 * server compares the parsed names with them (a quoted "$user" is still $user).
 */

/** NAMEDATALEN - 1: the longest identifier, in bytes. */
export const MAX_IDENTIFIER_BYTES = 63;

/** Whitespace as the server's scanner sees it between list items. */
function isListSpace(char: string | undefined): boolean {
  return char === ' ' || char === '\t' || char === '\n' || char === '\r' || char === '\f' || char === '\v';
}

/** Truncates to at most 63 UTF-8 bytes without splitting a character. */
export function truncateIdentifier(name: string): string {
  if (Buffer.byteLength(name, 'utf8') <= MAX_IDENTIFIER_BYTES) return name;
  let bytes = 0;
  let end = 0;
  for (const char of name) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > MAX_IDENTIFIER_BYTES) break;
    bytes += size;
    end += char.length;
  }
  return name.slice(0, end);
}

/** Only ASCII letters are downcased (the server's rule for multibyte encodings such as UTF8). */
function downcaseIdentifier(name: string): string {
  return name.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** The schema names of a search_path value string; undefined when the server would reject it. */
export function parseSearchPath(value: string): string[] | undefined {
  const names: string[] = [];
  let at = 0;
  const skipSpace = (): void => {
    while (isListSpace(value[at])) at++;
  };
  skipSpace();
  if (at === value.length) return names; // an empty value is an empty list
  for (;;) {
    if (value[at] === '"') {
      let name = '';
      let from = at + 1;
      for (;;) {
        const close = value.indexOf('"', from);
        if (close < 0) return undefined; // unterminated quote
        name += value.slice(from, close);
        if (value[close + 1] !== '"') {
          at = close + 1;
          break;
        }
        name += '"';
        from = close + 2;
      }
      names.push(truncateIdentifier(name));
    } else {
      const start = at;
      while (at < value.length && value[at] !== ',' && !isListSpace(value[at])) at++;
      if (at === start) return undefined; // empty bare name
      names.push(truncateIdentifier(downcaseIdentifier(value.slice(start, at))));
    }
    skipSpace();
    if (at === value.length) return names;
    if (value[at] !== ',') return undefined;
    at++;
    skipSpace();
  }
}

/** One SET argument as the server reads it: a string is one name as written; a number is a bare name. */
export type SetArgument = { readonly string: string } | { readonly number: string };

/** The schema names of `SET search_path TO …` arguments; undefined when the server would reject them. */
export function searchPathFromSetArguments(args: readonly SetArgument[]): string[] | undefined {
  const names: string[] = [];
  for (const arg of args) {
    if ('string' in arg) {
      names.push(truncateIdentifier(arg.string));
    } else {
      const parsed = parseSearchPath(arg.number);
      if (parsed === undefined || parsed.length !== 1) return undefined;
      names.push(...parsed);
    }
  }
  return names;
}
