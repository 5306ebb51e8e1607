import { watchFileChanges, type FileChangeWatcher } from '../config/index.js';
import type { CatalogQuery } from './catalogReader.js';
import { checkAgainstCatalog } from './catalogValidation.js';
import { PolicyError, errorsOf, inFileOrder, warningsOf } from './policyError.js';
import { readPolicyFile } from './policyParser.js';
import { createPolicySet } from './policySet.js';
import type { PolicySet } from './policyTypes.js';

/**
 * Reads a policy file and runs every check: the static ones and, with `catalog`, those against
 * the live database. Throws PolicyError (every error, with file:line:column), or the database's
 * error when the catalog cannot be read.
 */
export async function loadAndValidatePolicies(file: string, catalog?: CatalogQuery): Promise<PolicySet> {
  const read = await readPolicyFile(file);
  if (errorsOf(read.issues).length > 0) throw new PolicyError(read.issues);
  const issues = [...read.issues];
  if (catalog) issues.push(...(await checkAgainstCatalog(read, catalog)).issues);
  if (errorsOf(issues).length > 0) throw new PolicyError(issues);
  return createPolicySet(file, read.columns, warningsOf(inFileOrder(issues)), read.privileges);
}

export type ReloadOutcome =
  | { readonly ok: true; readonly policies: PolicySet }
  | { readonly ok: false; readonly error: unknown };

export interface PolicyStoreOptions {
  /** The policy file; messages name it as given. */
  file: string;
  /** Validate every load against the live catalog too (recommended for the proxy). */
  catalog?: CatalogQuery;
  /** Reload when the process gets SIGHUP. Default true. */
  reloadOnSighup?: boolean;
  /** Reload when the file changes. Default true. */
  watchFile?: boolean;
  /** Quiet time after the last file event before reloading. Default 100 ms. */
  debounceMs?: number;
  /** A further check of each set before it is put in force: throwing refuses it (the start fails, a reload keeps the previous set). */
  check?(policies: PolicySet): Promise<void>;
  /** A new policy set is in force (its warnings are in `policies.warnings`). */
  onReload?(policies: PolicySet): void;
  /** A reload failed; the previous policy set stays in force. A PolicyError lists every issue. */
  onError?(error: unknown): void;
}

export interface PolicyStore {
  /** The policy set in force. */
  readonly current: PolicySet;
  /** Calls `listener` with each new policy set; returns the unsubscribe function. */
  onChange(listener: (policies: PolicySet) => void): () => void;
  /** Reloads now; resolves once the new set is in force or refused. Reloads never overlap. */
  reload(): Promise<ReloadOutcome>;
  /** Stops watching and listening for SIGHUP. */
  close(): void;
}

/**
 * Loads the policies (throwing PolicyError when the file is not valid: the proxy must not start
 * without them) and keeps them current: on file change (the folder is watched, since editors
 * replace files by renaming) and on SIGHUP, the file is checked again, statically and against
 * the catalog, and swapped in only if valid. A bad edit keeps the previous set and is reported.
 */
export async function openPolicyStore(opts: PolicyStoreOptions): Promise<PolicyStore> {
  const load = async (): Promise<PolicySet> => {
    const set = await loadAndValidatePolicies(opts.file, opts.catalog);
    await opts.check?.(set);
    return set;
  };
  let current = await load();
  const listeners = new Set<(policies: PolicySet) => void>();
  let chain: Promise<ReloadOutcome> = Promise.resolve({ ok: true, policies: current });
  let closed = false;

  const reload = (): Promise<ReloadOutcome> => {
    chain = chain.then(async (): Promise<ReloadOutcome> => {
      try {
        const next = await load();
        if (closed) return { ok: true, policies: current };
        current = next;
        opts.onReload?.(next);
        for (const listener of listeners) listener(next);
        return { ok: true, policies: next };
      } catch (error) {
        opts.onError?.(error);
        return { ok: false, error };
      }
    });
    return chain;
  };

  const onSighup = (): void => { void reload(); };
  if (opts.reloadOnSighup ?? true) process.on('SIGHUP', onSighup);

  const watcher: FileChangeWatcher | undefined = opts.watchFile === false ? undefined : watchFileChanges(opts.file, {
    onChange: () => { void reload(); },
    onError: (err) => opts.onError?.(err),
    ...(opts.debounceMs === undefined ? {} : { debounceMs: opts.debounceMs }),
  });

  return {
    get current() { return current; },
    onChange(listener) {
      listeners.add(listener);
      return () => { listeners.delete(listener); };
    },
    reload,
    close() {
      closed = true;
      watcher?.close();
      process.off('SIGHUP', onSighup);
    },
  };
}
