/**
 * The two Feistel halves (A, B of SP 800-38G) of every value of one FF1 batch group (same radix,
 * same length), kept between rounds in the representation that suits radix and length.
 *
 * Loading: encryption starts with A = X[0..u), B = X[u..n); decryption (rounds 9..0) with
 * A = X[u..n), B = X[0..u), so that the same round step serves both.
 */
export interface FeistelHalves {
  /** Xors [NUM_radix(B)]^b of every value into `out`, value j at offset + j*stride. */
  xorNumB(out: Uint8Array, offset: number, stride: number, b: number): void;
  /**
   * Steps 6.vi-ix for every value: y = NUM(S_j[0..d)), C = (A + y) mod radix^m (A - y when
   * decrypting), A <- B, B <- C. S_j starts at s[j*stride].
   */
  mixRound(s: Uint8Array, stride: number, d: number, m: number, subtract: boolean): void;
  /** The resulting numeral strings: A||B after encryption, B||A after decryption. */
  numerals(): Uint16Array[];
}
