/**
 * Whole-batch passes in slices (see slicedWork.ts): every pass over a request's values whose cost
 * grows with their number and length — checking them, transforming them, writing them out — runs
 * through these, so that no pass holds the event loop for the whole batch. A batch that fits in
 * its first slice is answered at once, with a value rather than a promise.
 */
import { inSlices } from './slicedWork.js';

/**
 * `transform` over `values` in slices, results in order. `transform` gets consecutive parts of
 * `values` (the array itself when one slice takes it all) and may be called again for the same
 * part (see inSlices).
 */
export function mapInSlices<T>(values: readonly string[], transform: (part: readonly string[]) => readonly T[]): T[] | Promise<T[]> {
  const out = new Array<T>(values.length);
  const work = (start: number, end: number): void => {
    const part = transform(start === 0 && end === values.length ? values : values.slice(start, end));
    for (let i = 0; i < part.length; i++) out[start + i] = part[i] as T;
  };
  const rest = inSlices(values, work);
  return rest ? rest.then(() => out) : out;
}

/** The indexes of the values for which `test` holds, in order, tested in slices. */
export function indexesInSlices(values: readonly string[], test: (value: string) => boolean): number[] | Promise<number[]> {
  // By slice, so that a slice run again (after a deferral) does not list its indexes twice.
  const found: number[][] = [];
  const work = (start: number, end: number): void => {
    const part: number[] = [];
    for (let i = start; i < end; i++) if (test(values[i] as string)) part.push(i);
    found[start] = part;
  };
  const rest = inSlices(values, work);
  const collect = (): number[] => found.flat();
  return rest ? rest.then(collect) : collect();
}
