/* AES over blocks, each value's tweak, and the round-independent part of FF1's PRF (ff1_rounds.h). */
#include <openssl/crypto.h>
#include <string.h>

#include "ff1_rounds.h"

int ff1_aes_blocks(EVP_CIPHER_CTX *aes, const uint8_t *in, uint8_t *out, size_t bytes) {
  int written = 0;
  if (EVP_EncryptUpdate(aes, out, &written, in, (int)bytes) != 1) return 0;
  return (size_t)written == bytes;
}

/* Value `value`'s tweak and its length. */
static const uint8_t *value_tweak(const Ff1Tweaks *tweaks, size_t value, size_t *length) {
  if (tweaks->ends == NULL) {
    *length = tweaks->length;
    return tweaks->bytes;
  }
  size_t from = value == 0 ? 0 : tweaks->ends[value - 1];
  *length = tweaks->ends[value] - from;
  return tweaks->bytes + from;
}

/* The byte of Q at `index`: the tweak, then zero padding (only indexes before [i] are asked for). */
static uint8_t tweak_byte(const uint8_t *tweak, size_t t, size_t index) {
  return index < t ? tweak[index] : 0;
}

/* One value's round-independent CBC-MAC state (ff1_rounds.h), remembered for a repeated (radix, n, tweak). */
static int round_independent_base(Ff1Context *context, uint32_t radix, uint32_t n, uint32_t u, uint32_t b,
                                  const uint8_t *tweak, size_t t, uint8_t base[BLOCK]) {
  if (context->remembered && context->remembered_radix == radix && context->remembered_n == n
      && context->remembered_tweak_length == t && (t == 0 || memcmp(context->remembered_tweak, tweak, t) == 0)) {
    memcpy(base, context->remembered_base, BLOCK);
    return 1;
  }
  uint8_t block[BLOCK] = {1, 2, 1,
                          (uint8_t)(radix >> 16), (uint8_t)(radix >> 8), (uint8_t)radix,
                          10, (uint8_t)(u & 255),
                          (uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n,
                          (uint8_t)(t >> 24), (uint8_t)(t >> 16), (uint8_t)(t >> 8), (uint8_t)t};
  uint8_t chain[BLOCK];
  int ok = ff1_aes_blocks(context->aes, block, chain, BLOCK);
  /* Q = T || 0^pad || [i]_1 || [NUM(B)]_b is whole blocks, so [i] sits at 15 - b % 16 of its block. */
  size_t pad = (size_t)((BLOCK - (t + b + 1) % BLOCK) % BLOCK);
  size_t round_at = t + pad;
  size_t constant_blocks = round_at / BLOCK;
  for (size_t q = 0; q < constant_blocks && ok; q++) {
    for (size_t x = 0; x < BLOCK; x++) block[x] = chain[x] ^ tweak_byte(tweak, t, q * BLOCK + x);
    ok = ff1_aes_blocks(context->aes, block, chain, BLOCK);
  }
  if (!ok) {
    OPENSSL_cleanse(chain, sizeof(chain));
    OPENSSL_cleanse(block, sizeof(block));
    return 0;
  }
  size_t offset = round_at % BLOCK;
  for (size_t x = 0; x < BLOCK; x++) {
    base[x] = x < offset ? (uint8_t)(chain[x] ^ tweak_byte(tweak, t, constant_blocks * BLOCK + x)) : chain[x];
  }
  OPENSSL_cleanse(chain, sizeof(chain));
  OPENSSL_cleanse(block, sizeof(block));
  if (t <= REMEMBERED_TWEAK_BYTES) {
    context->remembered = 1;
    context->remembered_radix = radix;
    context->remembered_n = n;
    context->remembered_tweak_length = t;
    if (t > 0) memcpy(context->remembered_tweak, tweak, t);
    memcpy(context->remembered_base, base, BLOCK);
  }
  return 1;
}

int ff1_lane_bases(Ff1Context *context, uint32_t radix, uint32_t n, uint32_t u, uint32_t b,
                   const Ff1Tweaks *tweaks, size_t start, size_t lanes, uint8_t *base) {
  for (size_t j = 0; j < lanes; j++) {
    size_t t;
    const uint8_t *tweak = value_tweak(tweaks, start + j, &t);
    if (!round_independent_base(context, radix, n, u, b, tweak, t, base + j * BLOCK)) return 0;
  }
  return 1;
}
