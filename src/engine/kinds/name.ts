/**
 * The `name` kind: a first, last or full name in any supported script, on one line.
 * What the four text kinds share: see textKind.ts.
 */
import type { KindHandler } from './kind.js';
import { createTextKind } from './textKind.js';

export const nameKind: KindHandler = createTextKind('name', { allowLineBreaks: false });
