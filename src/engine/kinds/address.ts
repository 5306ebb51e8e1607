/**
 * The `address` kind: free-form location text in any supported script ("221B Baker Street, London",
 * "東京都千代田区"). Multi-line addresses are common, so tab, line feed and carriage return are allowed.
 * What the four text kinds share: see textKind.ts.
 */
import type { KindHandler } from './kind.js';
import { createTextKind } from './textKind.js';

export const addressKind: KindHandler = createTextKind('address', { allowLineBreaks: true });
