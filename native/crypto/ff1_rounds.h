/*
 * What the two FF1 round paths share: the context a handle holds, AES over whole blocks, and the
 * round-independent part of the PRF for a lane of values, each with its tweak (ff1_prf.c). ff1.c
 * holds the N-API functions and the path for halves that fit 64-bit integers; ff1_digits.c runs
 * that path over the digits of text fields in place; ff1_bytes.c the radix-256 path over byte strings.
 */
#ifndef PGVEIL_FF1_ROUNDS_H
#define PGVEIL_FF1_ROUNDS_H

#include <node_api.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BLOCK 16
#define ROUNDS 10
/* Values whose rounds share one EVP call: AES-NI pipelines independent blocks. */
#define LANES 32
/* The remembered round-independent chain covers tweaks up to this length. */
#define REMEMBERED_TWEAK_BYTES 64
/* The longest radix-256 string the byte path takes (halves of at most 64 bytes); exported as maxBytes. */
#define MAX_BYTES_N 128

typedef struct {
  EVP_CIPHER_CTX *aes;
  /* The last (radix, n, tweak)'s chain of P and Q's constant blocks: a proxy repeats them. */
  int remembered;
  uint32_t remembered_radix;
  uint32_t remembered_n;
  size_t remembered_tweak_length;
  uint8_t remembered_tweak[REMEMBERED_TWEAK_BYTES];
  uint8_t remembered_base[BLOCK];
} Ff1Context;

/* The tweaks of one call: all of `bytes` for every value, or value j's slice bytes[ends[j-1], ends[j]). */
typedef struct {
  const uint8_t *bytes;
  size_t length;
  const uint32_t *ends; /* NULL: one tweak for every value */
} Ff1Tweaks;

/* ECB over `bytes` (whole blocks); in == out is allowed. 1 on success. */
int ff1_aes_blocks(EVP_CIPHER_CTX *aes, const uint8_t *in, uint8_t *out, size_t bytes);


/*
 * For values start .. start + lanes - 1, each with its tweak, into base[j * BLOCK]: the CBC-MAC
 * state no round changes (CIPH(P), chained through the blocks of Q that hold only tweak and
 * padding, xored with the tweak tail and padding of the block that holds [i]). b is the byte
 * length of NUM(B). 1 on success.
 */
int ff1_lane_bases(Ff1Context *context, uint32_t radix, uint32_t n, uint32_t u, uint32_t b,
                   const Ff1Tweaks *tweaks, size_t start, size_t lanes, uint8_t *base);

/* A call's values: n numerals each, or (radix 2) n bits each in an integer; one pair is set. */
typedef struct {
  const uint16_t *numerals_in;
  uint16_t *numerals_out;
  const uint32_t *bits_in;
  uint32_t *bits_out;
} Ff1Values;

/*
 * The rounds, LANES values at a time, over halves that fit 64-bit integers (modulus_u = radix^u,
 * modulus_v = radix^v < 2^53, checked by the caller), u = n / 2. 1 on success.
 */
int ff1_crypt_lanes(Ff1Context *context, uint32_t radix, uint32_t n, uint64_t modulus_u, uint64_t modulus_v,
                    const Ff1Tweaks *tweaks, size_t count, bool decrypt, const Ff1Values *values);

/* FF1 in radix 256 over count values of n <= MAX_BYTES_N bytes (as numerals). 1 on success. */
int ff1_crypt_bytes(Ff1Context *context, uint32_t n, const uint16_t *input, uint16_t *output, size_t count,
                    const Ff1Tweaks *tweaks, bool decrypt);

/* The context of a createContext handle; NULL for anything else. */
Ff1Context *ff1_context_of(napi_env env, napi_value value);

/*
 * FF1 in radix 256 of count values of 3 <= n <= MAX_BYTES_N bytes each (as numerals, end to end),
 * by whichever path crypt would take for them. 1 on success; 0 for another n or when AES fails.
 */
int ff1_crypt_radix256(Ff1Context *context, uint32_t n, const uint16_t *input, uint16_t *output, size_t count, const Ff1Tweaks *tweaks, bool decrypt);

/*
 * An FF1 call's `count` arguments into argv and the context its first one holds (a createContext
 * handle); NULL, with a TypeError pending that names `what`, for another count or handle.
 */
Ff1Context *ff1_call(napi_env env, napi_callback_info info, size_t count, napi_value *argv, const char *what);

/* cryptDigitsInPlace (ff1_digits.c). */
napi_value ff1_crypt_digits_in_place(napi_env env, napi_callback_info info);

#endif
