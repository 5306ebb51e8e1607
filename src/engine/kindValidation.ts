import { KIND_HANDLERS } from './kinds/registry.js';
import { DEFAULT_LANG, type Kind } from './types.js';

/**
 * Whether `value` is a value of `kind`, as protect decides it: the engine's own parser, so a value
 * this accepts is one the proxy would protect rather than refuse.
 */
export function isValueOfKind(kind: Kind, value: string): boolean {
  return KIND_HANDLERS[kind].isValid(value, DEFAULT_LANG);
}
