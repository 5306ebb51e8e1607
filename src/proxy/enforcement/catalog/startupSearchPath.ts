/**
 * A session's initial path settings, from what its login told the server: a `search_path` or
 * `role` startup parameter, `-c name=value` / `--name=value` in the `options` parameter (split
 * the way the server splits it: on whitespace, a backslash keeps the next character), or, on
 * PostgreSQL 18+, the search_path the server reports at login. Without any of these the session
 * starts on its default (server, database or role), which the catalog connection reads.
 */
import { parseSearchPath } from '../../sql/searchPathValue.js';
import { DEFAULT_PATH_SETTINGS, type PathSettings } from './searchPathSettings.js';

/** The server's split of the `options` startup parameter (pg_split_opts). */
export function splitStartupOptions(options: string): string[] {
  const words: string[] = [];
  let at = 0;
  while (at < options.length) {
    while (at < options.length && /\s/.test(options[at] as string)) at++;
    if (at >= options.length) break;
    let word = '';
    let escaped = false;
    for (; at < options.length; at++) {
      const char = options[at] as string;
      if (/\s/.test(char) && !escaped) break;
      if (!escaped && char === '\\') {
        escaped = true;
      } else {
        escaped = false;
        word += char;
      }
    }
    words.push(word);
  }
  return words;
}

/**
 * `name=value` settings of the options words (-c name=value, -cname=value, --name=value);
 * undefined when a switch pgveil does not read may carry one (grouped flags such as -ec).
 */
export function settingsOfStartupOptions(options: string): Map<string, string> | undefined {
  const words = splitStartupOptions(options);
  const settings = new Map<string, string>();
  for (let at = 0; at < words.length; at++) {
    const word = words[at] as string;
    let setting: string | undefined;
    if (word === '-c') setting = words[++at];
    else if (word.startsWith('--')) setting = word.slice(2);
    else if (word.startsWith('-c')) setting = word.slice(2);
    else if (word.startsWith('-') && word.includes('c')) return undefined;
    else continue; // other switches set other parameters
    const equals = setting?.indexOf('=') ?? -1;
    if (setting === undefined || equals <= 0) return undefined; // the server refuses the login
    settings.set(setting.slice(0, equals).replace(/-/g, '_').toLowerCase(), setting.slice(equals + 1));
  }
  return settings;
}

/**
 * The initial settings. `startup`: the client's startup parameters (user and database excluded);
 * `reportedPath`: the search_path in the login's ParameterStatus, if the server reports it.
 */
export function initialPathSettings(startup: ReadonlyMap<string, string> | undefined, reportedPath: string | undefined): PathSettings {
  const given = new Map<string, string>();
  for (const [name, value] of startup ?? []) given.set(name.toLowerCase(), value);
  const options = given.get('options');
  if (options !== undefined) {
    const fromOptions = settingsOfStartupOptions(options);
    if (fromOptions === undefined) return { ...DEFAULT_PATH_SETTINGS, path: { kind: 'unknown' } };
    // The server applies options first, then the other startup parameters: those win.
    for (const [name, value] of fromOptions) if (!given.has(name)) given.set(name, value);
  }
  let settings: PathSettings = DEFAULT_PATH_SETTINGS;
  const path = reportedPath ?? given.get('search_path');
  if (path !== undefined) {
    const names = parseSearchPath(path);
    settings = { ...settings, path: names === undefined ? { kind: 'unknown' } : { kind: 'names', names } };
  }
  const role = given.get('role');
  if (role !== undefined) settings = { ...settings, role: role === 'none' ? null : { kind: 'named', name: role } };
  if (given.has('session_authorization')) settings = { ...settings, sessionUser: { kind: 'unknown' }, role: { kind: 'unknown' } };
  return settings;
}
