import { isAbsolute, resolve } from 'node:path';
import { isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';
import type { ConfigIssue } from './configError.js';

export type KeyPath = readonly (string | number)[];

export function pathText(path: KeyPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

function listChoices(choices: readonly string[]): string {
  return choices.join(', ');
}

/** A plain object read from YAML (not an array, not null). */
export type ConfigMap = Record<string, unknown>;

export interface ConfigReaderOptions {
  file: string;
  /** Folder relative paths are resolved against. */
  baseDir: string;
  doc?: Document;
  lineCounter?: LineCounter;
  /** Key paths (dotted) whose value came from an environment variable, with its name. */
  envSources?: ReadonlyMap<string, string>;
}

/**
 * Reads typed settings out of the parsed YAML and collects every mistake with its file, line,
 * column, key path and the valid choices, so one run of `pgveil serve` reports all of them.
 * Messages quote no values: a mistyped password must not end up in a terminal or a log.
 */
export class ConfigReader {
  readonly issues: ConfigIssue[] = [];
  readonly baseDir: string;

  constructor(private readonly opts: ConfigReaderOptions) {
    this.baseDir = opts.baseDir;
  }

  issue(path: KeyPath, message: string, atKey = false): void {
    const text = pathText(path);
    const source = this.opts.envSources?.get(text);
    const issue: ConfigIssue = { file: this.opts.file, path: text, message };
    if (source !== undefined) issue.source = `environment variable ${source}`;
    else Object.assign(issue, this.locate(path, atKey));
    this.issues.push(issue);
  }

  /** Line and column of the value (or key) at `path`, or of its nearest existing parent. */
  locate(path: KeyPath, atKey = false): { line?: number; column?: number } {
    const { doc, lineCounter } = this.opts;
    if (!doc || !lineCounter) return {};
    let node: unknown = doc.contents;
    let best: number | undefined = (doc.contents as Node | null)?.range?.[0];
    for (let i = 0; i < path.length; i++) {
      const seg = path[i];
      const last = i === path.length - 1;
      if (isMap(node) && typeof seg === 'string') {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === seg);
        if (!pair) break;
        const keyStart = isScalar(pair.key) ? pair.key.range?.[0] : undefined;
        const valueStart = (pair.value as Node | null)?.range?.[0];
        best = last && atKey ? keyStart ?? best : valueStart ?? keyStart ?? best;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number') {
        const item = node.items[seg] as Node | undefined;
        if (!item) break;
        best = item.range?.[0] ?? best;
        node = item;
      } else {
        break;
      }
    }
    if (best === undefined) return {};
    const pos = lineCounter.linePos(best);
    return { line: pos.line, column: pos.col };
  }

  /**
   * `value` as a map with only `allowed` keys; unknown keys are reported with the valid ones.
   * Returns undefined (and reports) when it is not a map; `{}` when absent.
   */
  map(value: unknown, path: KeyPath, allowed: readonly string[]): ConfigMap | undefined {
    if (value === undefined || value === null) return {};
    if (typeof value !== 'object' || Array.isArray(value)) {
      this.issue(path, `must be a mapping of settings (${listChoices(allowed)})`);
      return undefined;
    }
    const map = value as ConfigMap;
    for (const key of Object.keys(map)) {
      if (!allowed.includes(key)) {
        this.issue([...path, key], `unknown setting; valid settings here: ${listChoices(allowed)}`, true);
      }
    }
    return map;
  }

  string(map: ConfigMap, key: string, path: KeyPath, opts: { required?: boolean } = {}): string | undefined {
    const value = map[key];
    if (value === undefined || value === null) {
      if (opts.required) this.issue([...path, key], 'is required');
      return undefined;
    }
    if (typeof value !== 'string' || value.trim() === '') {
      this.issue([...path, key], 'must be a non-empty string');
      return undefined;
    }
    return value;
  }

  integer(map: ConfigMap, key: string, path: KeyPath, dflt: number, min: number, max: number): number {
    const value = map[key];
    if (value === undefined || value === null) return dflt;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.issue([...path, key], `must be an integer from ${min} to ${max}`);
      return dflt;
    }
    return value;
  }

  boolean(map: ConfigMap, key: string, path: KeyPath, dflt: boolean): boolean {
    const value = map[key];
    if (value === undefined || value === null) return dflt;
    if (typeof value !== 'boolean') {
      this.issue([...path, key], 'must be true or false');
      return dflt;
    }
    return value;
  }

  choice<T extends string>(map: ConfigMap, key: string, path: KeyPath, choices: readonly T[], dflt: T): T {
    const value = map[key];
    if (value === undefined || value === null) return dflt;
    if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
      this.issue([...path, key], `must be one of: ${listChoices(choices)}`);
      return dflt;
    }
    return value as T;
  }

  /** A file path, resolved against the configuration file's folder. */
  path(map: ConfigMap, key: string, path: KeyPath, opts: { required?: boolean } = {}): string | undefined {
    const value = this.string(map, key, path, opts);
    if (value === undefined) return undefined;
    return isAbsolute(value) ? value : resolve(this.baseDir, value);
  }

  list(value: unknown, path: KeyPath): unknown[] | undefined {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      this.issue(path, 'must be a list');
      return undefined;
    }
    return value;
  }

  port(map: ConfigMap, key: string, path: KeyPath, dflt: number): number {
    return this.integer(map, key, path, dflt, 0, 65535);
  }
}
