import type { Kind, ProtectOptions, ResolvedOptions } from './types.js';
import type { ValueProtection } from './valueProtection.js';

interface Held {
  readonly method: unknown;
  readonly scope: unknown;
  readonly noise: unknown;
  readonly lang: unknown;
  readonly options: ResolvedOptions;
  readonly protection: ValueProtection;
}

export interface HeldProtection {
  readonly options: ResolvedOptions;
  readonly protection: ValueProtection;
}

/**
 * The ValueProtection made for a caller's options object and kind, kept so that one-value calls
 * with the same object (the proxy hands the same one per column on every call) skip resolving
 * the options again. An entry answers only while the object's fields are still the ones it was
 * resolved from, so a caller that changes them in place gets them resolved (and checked) afresh.
 */
export class HeldProtections {
  private readonly byOptions = new WeakMap<ProtectOptions, Map<Kind, Held>>();

  get(kind: Kind, given: ProtectOptions | undefined): HeldProtection | undefined {
    if (typeof given !== 'object' || given === null) return undefined;
    const held = this.byOptions.get(given)?.get(kind);
    if (held === undefined) return undefined;
    const same = held.method === given.method && held.scope === given.scope && held.noise === given.noise && held.lang === given.lang;
    return same ? held : undefined;
  }

  /** Keeps `protection` for (kind, given), resolved from given's fields as they are now. */
  hold(kind: Kind, given: ProtectOptions | undefined, options: ResolvedOptions, protection: ValueProtection): void {
    if (typeof given !== 'object' || given === null) return;
    let byKind = this.byOptions.get(given);
    if (byKind === undefined) {
      byKind = new Map();
      this.byOptions.set(given, byKind);
    }
    byKind.set(kind, { method: given.method, scope: given.scope, noise: given.noise, lang: given.lang, options, protection });
  }
}
