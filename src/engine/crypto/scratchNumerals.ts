/**
 * A reusable Uint16Array for work that is done before it returns (the batch paths' numerals laid
 * end to end): one buffer per user, grown as needed, instead of a fresh array per call, whose
 * allocation and release cost more than the numerals' own work. Each user owns its instance and
 * wipes what it wrote before returning.
 */
const INITIAL_LENGTH = 4096;
/** Past this a call gets an array of its own: one huge batch does not pin its memory. */
const MAX_KEPT_LENGTH = 1 << 20;

export class ScratchNumerals {
  private buffer = new Uint16Array(INITIAL_LENGTH);

  /** An array of `length` numerals, valid until the next take(); not zeroed. */
  take(length: number): Uint16Array {
    if (length > this.buffer.length) {
      if (length > MAX_KEPT_LENGTH) return new Uint16Array(length);
      let grown = this.buffer.length;
      while (grown < length) grown *= 2;
      this.buffer = new Uint16Array(grown);
    }
    return this.buffer.subarray(0, length);
  }
}
