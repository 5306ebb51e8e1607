/*
 * FF1 in radix 256 for halves too long for 64-bit integers (token bodies: emails, names, uuids,
 * text): NUM_256 of a byte string is the bytes themselves, b = v, y mod 256^m is the last m bytes
 * of S[0..d), and the modular addition is a byte-wise one whose carry falls off the top.
 */
#include <assert.h>
#include <openssl/crypto.h>
#include <string.h>

#include "ff1_rounds.h"

#define MAX_HALF_BYTES (MAX_BYTES_N - MAX_BYTES_N / 2)
/* S = R || CIPH(R xor [1]) || ...: d <= 4 * 16 + 4 bytes, five blocks. */
#define MAX_S_BLOCKS 5

/*
 * Q = T || 0^pad || [i] || NUM(B) ends on a block boundary: [i] sits at 15 - b % 16 of its block,
 * followed by b % 16 bytes of NUM(B), then b / 16 whole blocks of it, chained through AES
 * (CBC-MAC). Lanes as in the integer path.
 */
int ff1_crypt_bytes(Ff1Context *context, uint32_t n, const uint16_t *input, uint16_t *output, size_t count,
                    const Ff1Tweaks *tweaks, bool decrypt) {
  uint32_t u = n / 2, v = n - u, b = v;
  uint32_t d = 4 * ((b + 3) / 4) + 4;
  uint32_t at = BLOCK - 1 - b % BLOCK; /* [i] in its block */
  uint32_t head = b % BLOCK;           /* bytes of NUM(B) after [i] in that block */
  uint32_t tail_blocks = b / BLOCK;
  uint32_t s_blocks = (d + BLOCK - 1) / BLOCK;
  /* halves[j][0] and [1]: left and right alternate between them; lengths as left_length, right_length. */
  static_assert(MAX_S_BLOCKS * BLOCK >= 4 * ((MAX_HALF_BYTES + 3) / 4) + 4, "S fits its buffer");
  uint8_t halves[LANES][2][MAX_HALF_BYTES];
  uint8_t numb[LANES][MAX_HALF_BYTES];
  uint8_t base[LANES * BLOCK], blocks[LANES * MAX_S_BLOCKS * BLOCK], chain[LANES * BLOCK], s[LANES * MAX_S_BLOCKS * BLOCK];
  size_t used = count < LANES ? count : LANES;
  int ok = 1;
  for (size_t start = 0; start < count && ok; start += LANES) {
    size_t lanes = count - start < LANES ? count - start : LANES;
    ok = ff1_lane_bases(context, 256, n, u, b, tweaks, start, lanes, base);
    for (size_t j = 0; j < lanes && ok; j++) {
      const uint16_t *x = input + (start + j) * n;
      /* Decryption runs rounds 9..0 from A = X[u..n), B = X[0..u): the same step serves both. */
      uint8_t *first = halves[j][decrypt ? 1 : 0], *second = halves[j][decrypt ? 0 : 1];
      for (uint32_t p = 0; p < u; p++) first[p] = (uint8_t)x[p];
      for (uint32_t p = 0; p < v; p++) second[p] = (uint8_t)x[u + p];
    }
    int left_index = 0;
    uint32_t left_length = decrypt ? v : u, right_length = decrypt ? u : v;
    for (int round = 0; round < ROUNDS && ok; round++) {
      int i = decrypt ? ROUNDS - 1 - round : round;
      uint32_t m = left_length;
      /* NUM(B), right-aligned in b bytes, and the block that holds [i]. */
      for (size_t j = 0; j < lanes; j++) {
        const uint8_t *right = halves[j][left_index ^ 1];
        memset(numb[j], 0, b - right_length);
        memcpy(numb[j] + (b - right_length), right, right_length);
        uint8_t *block = blocks + j * BLOCK;
        memcpy(block, base + j * BLOCK, BLOCK);
        block[at] ^= (uint8_t)i;
        for (uint32_t p = 0; p < head; p++) block[at + 1 + p] ^= numb[j][p];
      }
      ok = ff1_aes_blocks(context->aes, blocks, chain, lanes * BLOCK);
      for (uint32_t k = 0; k < tail_blocks && ok; k++) {
        for (size_t j = 0; j < lanes; j++) {
          for (uint32_t x = 0; x < BLOCK; x++) blocks[j * BLOCK + x] = chain[j * BLOCK + x] ^ numb[j][head + k * BLOCK + x];
        }
        ok = ff1_aes_blocks(context->aes, blocks, chain, lanes * BLOCK);
      }
      /* S: R, then CIPH(R xor [e]_16) for e = 1 .. s_blocks - 1. */
      for (size_t j = 0; j < lanes; j++) memcpy(s + j * s_blocks * BLOCK, chain + j * BLOCK, BLOCK);
      if (s_blocks > 1 && ok) {
        size_t extra = s_blocks - 1;
        for (size_t j = 0; j < lanes; j++) {
          for (size_t e = 1; e <= extra; e++) {
            uint8_t *block = blocks + (j * extra + e - 1) * BLOCK;
            memcpy(block, chain + j * BLOCK, BLOCK);
            block[BLOCK - 1] ^= (uint8_t)e;
          }
        }
        ok = ff1_aes_blocks(context->aes, blocks, blocks, lanes * extra * BLOCK);
        for (size_t j = 0; j < lanes && ok; j++) memcpy(s + (j * s_blocks + 1) * BLOCK, blocks + j * extra * BLOCK, extra * BLOCK);
      }
      /* C = A +/- y mod 256^m, y the last m bytes of S[0..d); it replaces A, which becomes the right half. */
      for (size_t j = 0; j < lanes && ok; j++) {
        uint8_t *a = halves[j][left_index];
        const uint8_t *y = s + j * s_blocks * BLOCK + d - m;
        int carry = 0;
        for (uint32_t p = m; p-- > 0;) {
          int sum = decrypt ? (int)a[p] - (int)y[p] - carry : (int)a[p] + (int)y[p] + carry;
          carry = decrypt ? (sum < 0) : (sum > 255);
          a[p] = (uint8_t)sum;
        }
      }
      left_index ^= 1;
      left_length = right_length;
      right_length = m;
    }
    for (size_t j = 0; j < lanes && ok; j++) {
      uint16_t *out = output + (start + j) * n;
      const uint8_t *first = halves[j][decrypt ? left_index ^ 1 : left_index];
      const uint8_t *second = halves[j][decrypt ? left_index : left_index ^ 1];
      for (uint32_t p = 0; p < u; p++) out[p] = first[p];
      for (uint32_t p = 0; p < v; p++) out[u + p] = second[p];
    }
  }
  /* No halves or PRF blocks left on the stack. */
  OPENSSL_cleanse(halves, used * sizeof(halves[0]));
  OPENSSL_cleanse(numb, used * sizeof(numb[0]));
  OPENSSL_cleanse(base, used * BLOCK);
  OPENSSL_cleanse(blocks, used * MAX_S_BLOCKS * BLOCK);
  OPENSSL_cleanse(chain, used * BLOCK);
  OPENSSL_cleanse(s, used * MAX_S_BLOCKS * BLOCK);
  return ok;
}
