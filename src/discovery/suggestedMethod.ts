/**
 * The method suggested for a kind in a column of a given type: one whose stored values the column
 * keeps as they are, so the suggestion passes `pgveil policy check` and the table needs no change.
 */
import type { Kind, Method } from '../engine/index.js';
import type { ColumnType } from '../policy/index.js';

export interface MethodChoice {
  readonly method: Method;
  /** Why this method, for the file's comment. */
  readonly because: string;
}

/** Kinds of free words: fpe refuses values too short for its domain, tokenise takes any. */
const WORD_KINDS: ReadonlySet<Kind> = new Set(['name', 'city', 'address', 'email']);

/** The longest text fpe writes for a kind whose output length can differ from its input. */
const FPE_LONGEST: Readonly<Partial<Record<Kind, number>>> = { ipv4: 15, uuid: 36 };

export function chooseMethod(kind: Kind, type: ColumnType): MethodChoice {
  switch (type.family) {
    case 'date':
    case 'uuid':
    case 'inet':
    case 'numeric':
      return { method: 'fpe', because: `fpe stores a valid ${type.display}, so the column keeps its type` };
    default:
      break;
  }
  if (type.maxLength === undefined) {
    return WORD_KINDS.has(kind)
      ? { method: 'tokenise', because: 'tokenise: equality search still works; tokens are longer than values, which text holds' }
      : { method: 'fpe', because: 'fpe keeps the layout and length of each value' };
  }
  const longest = FPE_LONGEST[kind];
  if (longest !== undefined && type.maxLength < longest) {
    return { method: 'passthrough', because: `${type.display} is too short for protected values of kind ${kind}: stored as is, masked on read; widen the column to protect it at rest` };
  }
  return {
    method: 'fpe',
    because: `fpe keeps the length, so values fit ${type.display}${WORD_KINDS.has(kind) ? ' (values too short to encrypt are refused: widen to text and use tokenise if that matters)' : ''}`,
  };
}
