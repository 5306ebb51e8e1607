/**
 * The `text` kind: arbitrary text in any supported script. fpe keeps word breaks, punctuation and
 * line breaks (tab, line feed and carriage return are allowed) in place.
 * What the four text kinds share: see textKind.ts.
 */
import type { KindHandler } from './kind.js';
import { createTextKind } from './textKind.js';

export const textKind: KindHandler = createTextKind('text', { allowLineBreaks: true });
