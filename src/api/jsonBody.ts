import type { FastifyBodyParser, FastifyRequest } from 'fastify';
import { ApiError } from './apiError.js';

/**
 * Bodies are vetted before JSON.parse: a few megabytes of `[[[[…]]]]` take V8 seconds to parse
 * (and as long again for the prototype-poisoning scan), and millions of tiny values most of a
 * second, all of it on the event loop every other client waits on. No request of the API nests
 * deeper than three levels or holds more values than `data` may, so a linear scan refuses those
 * first (400 and 413), naming the rule and never a value.
 */

/** Deeper than any request of the API (body → options → value is three). */
export const MAX_JSON_DEPTH = 16;
/** Commas beside those of `data`: the other fields of a request. */
const OTHER_VALUES = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * The index of the quote that closes the string opened at `open`, or -1. Linear: a string whose
 * first quote has no backslash before it ends there (one native search); any other is read once,
 * a backslash skipping the character it escapes. Searching for each quote and counting the
 * backslashes before it took 200 ms over 10 MiB of escaped quotes.
 */
function closingQuote(text: string, open: number): number {
  const first = text.indexOf('"', open + 1);
  if (first === -1 || text.charCodeAt(first - 1) !== BACKSLASH) return first;
  for (let i = open + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  return -1;
}

/** Why `text` is refused before parsing (outside strings: nesting, and the number of commas), or undefined. */
export function jsonShapeProblem(text: string, maxValues: number): 'too_deep' | 'too_many_values' | undefined {
  let depth = 0;
  let commas = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = closingQuote(text, i);
      if (end === -1) return undefined; // unterminated: JSON.parse refuses it at once
      i = end;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > MAX_JSON_DEPTH) return 'too_deep';
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    } else if (c === COMMA) {
      if (++commas > maxValues) return 'too_many_values';
    }
  }
  return undefined;
}

/** Wraps fastify's JSON parser (prototype-poisoning checks included) with the scan above. */
export function boundedJsonParser(parse: FastifyBodyParser<string>, maxElements: number): FastifyBodyParser<string> {
  const maxValues = maxElements + OTHER_VALUES;
  return function parseBoundedJson(this: unknown, request: FastifyRequest, body: string, done: (err: Error | null, body?: unknown) => void): void {
    const problem = jsonShapeProblem(body, maxValues);
    if (problem === 'too_deep') {
      done(new ApiError(400, 'invalid_body', `the body nests deeper than ${MAX_JSON_DEPTH} levels`));
      return;
    }
    if (problem === 'too_many_values') {
      done(new ApiError(413, 'too_many_elements', `the body holds more values than data may (${maxElements} elements); split the request`));
      return;
    }
    void parse.call(this as never, request, body, done);
  } as FastifyBodyParser<string>;
}
