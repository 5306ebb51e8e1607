import type { ApiLimits } from '../config/index.js';
import { OPERATIONS, indexesInSlices, maxTokenBytes, type Operation, type ProtectOptions } from '../engine/index.js';
import { ApiError } from './apiError.js';

/** The body as the schema lets it through: shapes checked, names not yet. */
export interface ProtectionRequestBody {
  id: number;
  operation: string;
  data: unknown[];
  options?: OptionFields;
  method?: string;
  scope?: string;
  noise?: number | string;
  lang?: string;
}

interface OptionFields {
  method?: string;
  scope?: string;
  noise?: number | string;
  lang?: string;
}

export interface ProtectionCall {
  operation: Operation;
  data: string[];
  options: ProtectOptions;
}

const OPTION_NAMES = ['method', 'scope', 'noise', 'lang'] as const;

/** Noise 2, "2" and " 02 " are the same value; anything else is compared as written. */
function comparable(name: string, value: unknown): string {
  if (name === 'noise') {
    const text = String(value).trim();
    if (/^\d+$/.test(text)) return String(Number(text));
    return text;
  }
  return String(value);
}

/**
 * Options may come in `options` or beside `operation` (the seed shows both). The same value in
 * both places is fine; different values are a 400 rather than a silent choice.
 */
export function mergeOptions(body: ProtectionRequestBody): ProtectOptions {
  const merged: ProtectOptions = {};
  const inner = body.options ?? {};
  for (const name of OPTION_NAMES) {
    const top = body[name];
    const nested = inner[name];
    if (top !== undefined && nested !== undefined && comparable(name, top) !== comparable(name, nested)) {
      throw new ApiError(400, 'conflicting_option',
        `${name} is given both at the top level and in options, with different values; give it once`);
    }
    const value = nested ?? top;
    if (value === undefined) continue;
    if (name === 'noise') merged.noise = value;
    else merged[name] = value as string;
  }
  return merged;
}

/**
 * Checks what the engine does not: the operation, and the request limits (413 names the
 * elements over the per-element limit). Element types are checked first: a non-string is a
 * client mistake (400) whatever its size. The bytes are counted in slices: 10 MiB of CJK text
 * takes tens of milliseconds to measure.
 */
export async function toProtectionCall(body: ProtectionRequestBody, limits: ApiLimits): Promise<ProtectionCall> {
  const operation = body.operation;
  if (!(OPERATIONS as readonly string[]).includes(operation)) {
    throw new ApiError(400, 'unknown_operation', `unknown operation; valid operations: ${OPERATIONS.join(', ')}`);
  }
  const data = body.data;
  if (data.length > limits.maxElements) {
    throw new ApiError(413, 'too_many_elements', `data has more than ${limits.maxElements} elements; split the request`);
  }
  const notStrings: number[] = [];
  for (let i = 0; i < data.length; i++) if (typeof data[i] !== 'string') notStrings.push(i);
  if (notStrings.length > 0) {
    throw new ApiError(400, 'not_a_string', 'every element of data must be a string', notStrings);
  }
  const strings = data as string[];
  // Unprotect takes tokens, longer than the values they protect: every token of a value within
  // the limit must come back.
  const maxBytes = operation === 'unprotect' ? maxTokenBytes(limits.maxElementBytes) : limits.maxElementBytes;
  // A UTF-8 character takes at most 3 bytes per UTF-16 unit: short strings skip the byte count.
  const safeLength = Math.floor(maxBytes / 3);
  const tooLarge = await indexesInSlices(strings, (v) => v.length > safeLength && Buffer.byteLength(v, 'utf8') > maxBytes);
  if (tooLarge.length > 0) {
    const what = operation === 'unprotect' ? `tokens longer than ${maxBytes} bytes (the longest a value of api.limits.maxElementBytes, ${limits.maxElementBytes}, becomes)` : `elements longer than ${maxBytes} bytes (api.limits.maxElementBytes)`;
    throw new ApiError(413, 'element_too_large', what, tooLarge);
  }
  return { operation: operation as Operation, data: strings, options: mergeOptions(body) };
}
