/**
 * The `city` kind: a city or town name in any supported script, on one line.
 * What the four text kinds share: see textKind.ts.
 */
import type { KindHandler } from './kind.js';
import { createTextKind } from './textKind.js';

export const cityKind: KindHandler = createTextKind('city', { allowLineBreaks: false });
