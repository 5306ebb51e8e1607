/*
 * FF1 (NIST SP 800-38G) Feistel rounds in C for numeral strings whose halves fit 64-bit integers
 * (here; over digits in text fields: ff1_digits.c) and for radix-256 byte strings (ff1_bytes.c), over OpenSSL's AES through EVP (AES-NI
 * where the CPU has it, constant time): the ten rounds of a value cost ten block encryptions
 * instead of ten JS-to-C++ crossings. The TypeScript FF1
 * (src/engine/crypto/ff1.ts) is the reference; outputs are identical.
 *
 * JS API:
 *   createContext(key: Uint8Array(16|24|32)) -> opaque handle (the AES key schedule; the key bytes
 *     are not kept, the schedule is wiped by EVP_CIPHER_CTX_free when the handle is collected)
 *   crypt(handle, radix, n, input: Uint16Array, output: Uint16Array, tweakBytes: Uint8Array,
 *         tweakEnds: Uint32Array | undefined, decrypt: boolean) -> undefined
 *     input holds count = input.length / n values of n numerals each; output gets the results.
 *     Halves must fit 64-bit integers (radix^(n - n/2) < 2^53), except in radix 256, where a
 *     numeral is a byte and the halves are byte strings of any length up to n = maxBytes.
 *     tweakEnds undefined: every value's tweak is all of tweakBytes; else value j's tweak is
 *     tweakBytes[tweakEnds[j-1] .. tweakEnds[j]) (tweakEnds[-1] = 0).
 *   cryptBits(handle, n, input: Uint32Array, output: Uint32Array, tweakBytes: Uint8Array,
 *             decrypt: boolean) -> undefined
 *     crypt in radix 2 of input.length values of n bits (20 <= n <= 32), each held in an integer
 *     below 2^n, most significant bit first; one tweak, all of tweakBytes, for every value.
 *   cryptDigitsInPlace(...): FF1 radix 10 over the digits of text fields where they lie (ff1_digits.c)
 *   maxBytes: number, the longest radix-256 string crypt takes as bytes (MAX_BYTES_N)
 * Every argument is checked; a bad one throws a TypeError or RangeError whose message names no
 * value, tweak or key byte.
 */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addon.h"
#include "ff1_rounds.h"

#define MAX_RADIX 65536
/* radix^v below 2^53: NUM(B) fits 7 bytes, r * 256 + byte stays below 2^61 while reducing y. */
#define MAX_MODULUS (UINT64_C(1) << 53)
#define MIN_DOMAIN UINT64_C(1000000)

static const napi_type_tag CONTEXT_TAG = {0x70677665696c6666ULL, 0x31616573636f6e74ULL};

static void finalize_context(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  Ff1Context *context = (Ff1Context *)data;
  if (context == NULL) return;
  EVP_CIPHER_CTX_free(context->aes); /* clears the key schedule */
  OPENSSL_cleanse(context, sizeof(*context));
  free(context);
}

static napi_value create_context(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return throw_type(env, "createContext: bad call");
  if (argc != 1) return throw_type(env, "createContext takes one argument, the AES key");
  void *key;
  size_t key_length;
  if (!typed_array(env, argv[0], napi_uint8_array, &key, &key_length)) return throw_type(env, "createContext: the key must be a Uint8Array");
  const EVP_CIPHER *cipher = key_length == 16 ? EVP_aes_128_ecb()
                           : key_length == 24 ? EVP_aes_192_ecb()
                           : key_length == 32 ? EVP_aes_256_ecb() : NULL;
  if (cipher == NULL) return throw_range(env, "createContext: an AES key is 16, 24 or 32 bytes");

  Ff1Context *context = (Ff1Context *)calloc(1, sizeof(Ff1Context));
  if (context == NULL) return throw_type(env, "createContext: out of memory");
  context->aes = EVP_CIPHER_CTX_new();
  if (context->aes == NULL || EVP_EncryptInit_ex(context->aes, cipher, NULL, (const unsigned char *)key, NULL) != 1
      || EVP_CIPHER_CTX_set_padding(context->aes, 0) != 1) {
    finalize_context(env, context, NULL);
    napi_throw_error(env, NULL, "createContext: OpenSSL could not set up AES");
    return NULL;
  }
  return tagged_handle(env, context, finalize_context, &CONTEXT_TAG, "createContext");
}

Ff1Context *ff1_call(napi_env env, napi_callback_info info, size_t count, napi_value *argv, const char *what) {
  char message[96];
  size_t argc = count;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != count) {
    snprintf(message, sizeof(message), "%s takes %zu arguments", what, count);
    throw_type(env, message);
    return NULL;
  }
  Ff1Context *context = (Ff1Context *)handle_data(env, argv[0], &CONTEXT_TAG);
  if (context == NULL) {
    snprintf(message, sizeof(message), "%s: the first argument must be a handle from createContext", what);
    throw_type(env, message);
  }
  return context;
}

/*
 * NUM(s[0..d)) mod modulus, d in {8, 12}, modulus <= 2^53. A power of two (radix 2, as the
 * integer domains of dates use) keeps the low bits, which the last eight bytes hold: no division.
 */
static uint64_t reduce(const uint8_t *s, uint32_t d, uint64_t modulus) {
  if ((modulus & (modulus - 1)) == 0) {
    uint64_t tail = 0;
    for (uint32_t p = d - 8; p < d; p++) tail = (tail << 8) | s[p];
    return tail & (modulus - 1);
  }
  uint64_t head = 0;
  for (int p = 0; p < 8; p++) head = (head << 8) | s[p];
  /* Powers of ten (the digit kinds' halves) by constant divisors: multiplies, not divides. */
#define REDUCE_BY(divisor)                                                         \
  do {                                                                             \
    uint64_t r = head % (divisor);                                                 \
    for (uint32_t p = 8; p < d; p++) r = ((r << 8) | s[p]) % (divisor);            \
    return r;                                                                      \
  } while (0)
  switch (modulus) {
    case UINT64_C(10): REDUCE_BY(UINT64_C(10));
    case UINT64_C(100): REDUCE_BY(UINT64_C(100));
    case UINT64_C(1000): REDUCE_BY(UINT64_C(1000));
    case UINT64_C(10000): REDUCE_BY(UINT64_C(10000));
    case UINT64_C(100000): REDUCE_BY(UINT64_C(100000));
    case UINT64_C(1000000): REDUCE_BY(UINT64_C(1000000));
    case UINT64_C(10000000): REDUCE_BY(UINT64_C(10000000));
    case UINT64_C(100000000): REDUCE_BY(UINT64_C(100000000));
    case UINT64_C(1000000000): REDUCE_BY(UINT64_C(1000000000));
    case UINT64_C(10000000000): REDUCE_BY(UINT64_C(10000000000));
    case UINT64_C(100000000000): REDUCE_BY(UINT64_C(100000000000));
    case UINT64_C(1000000000000): REDUCE_BY(UINT64_C(1000000000000));
    case UINT64_C(10000000000000): REDUCE_BY(UINT64_C(10000000000000));
    case UINT64_C(100000000000000): REDUCE_BY(UINT64_C(100000000000000));
    case UINT64_C(1000000000000000): REDUCE_BY(UINT64_C(1000000000000000));
    default: REDUCE_BY(modulus);
  }
#undef REDUCE_BY
}

static uint64_t numerals_value(const uint16_t *x, uint32_t length, uint32_t radix) {
  uint64_t value = 0;
  for (uint32_t p = 0; p < length; p++) value = value * radix + x[p];
  return value;
}

/*
 * The numerals of value, least significant last. Division by a constant compiles to a multiply,
 * by a variable to a divide instruction (tens of cycles): radix 10 (the digit kinds) and 2 (the
 * integer domains) get their own loops.
 */
static void value_numerals(uint64_t value, uint32_t radix, uint16_t *out, uint32_t length) {
  uint32_t p = length;
  if (radix == 2) {
    for (; p > 0; value >>= 1) out[--p] = (uint16_t)(value & 1);
    return;
  }
  if (radix == 10) {
    for (; p > 0; value /= 10) out[--p] = (uint16_t)(value % 10);
    return;
  }
  for (; p > 0 && value > UINT32_MAX; value /= radix) out[--p] = (uint16_t)(value % radix);
  /* 32-bit division for the rest: cheaper than 64-bit on most CPUs. */
  for (uint32_t small = (uint32_t)value; p > 0; small /= radix) out[--p] = (uint16_t)(small % radix);
}

int ff1_crypt_lanes(Ff1Context *context, uint32_t radix, uint32_t n, uint64_t modulus_u, uint64_t modulus_v,
                       const Ff1Tweaks *tweaks, size_t count, bool decrypt, const Ff1Values *values) {
  /* Sizes of SP 800-38G: u, v, b (bytes of radix^v - 1), d = 4 ceil(b/4) + 4. */
  uint32_t u = n / 2, v = n - u;
  uint32_t b = 0;
  for (uint64_t top = modulus_v - 1; top > 0; top >>= 8) b++;
  uint32_t d = 4 * ((b + 3) / 4) + 4;
  uint64_t left[LANES], right[LANES];
  uint8_t base[LANES * BLOCK], blocks[LANES * BLOCK], encrypted[LANES * BLOCK];
  size_t used = count < LANES ? count : LANES;
  int ok = 1;
  for (size_t start = 0; start < count && ok; start += LANES) {
    size_t lanes = count - start < LANES ? count - start : LANES;
    ok = ff1_lane_bases(context, radix, n, u, b, tweaks, start, lanes, base);
    for (size_t j = 0; j < lanes && ok; j++) {
      uint64_t first, second;
      if (values->bits_in != NULL) {
        uint32_t x = values->bits_in[start + j];
        first = (uint64_t)x >> v;
        second = x & (modulus_v - 1);
      } else {
        const uint16_t *x = values->numerals_in + (start + j) * n;
        first = numerals_value(x, u, radix);
        second = numerals_value(x + u, v, radix);
      }
      /* Decryption runs rounds 9..0 from A = X[u..n), B = X[0..u): the same step serves both. */
      left[j] = decrypt ? second : first;
      right[j] = decrypt ? first : second;
    }
    for (int round = 0; round < ROUNDS && ok; round++) {
      int i = decrypt ? ROUNDS - 1 - round : round;
      uint64_t modulus = i % 2 == 0 ? modulus_u : modulus_v;
      for (size_t j = 0; j < lanes; j++) {
        uint8_t *block = blocks + j * BLOCK;
        memcpy(block, base + j * BLOCK, BLOCK);
        block[BLOCK - 1 - b] ^= (uint8_t)i;
        uint64_t numb = right[j];
        for (uint32_t p = 0; p < b; p++, numb >>= 8) block[BLOCK - 1 - p] ^= (uint8_t)numb;
      }
      ok = ff1_aes_blocks(context->aes, blocks, encrypted, lanes * BLOCK);
      for (size_t j = 0; j < lanes && ok; j++) {
        uint64_t y = reduce(encrypted + j * BLOCK, d, modulus);
        uint64_t a = left[j];
        uint64_t c = decrypt ? (a >= y ? a - y : a + modulus - y) : (a + y >= modulus ? a + y - modulus : a + y);
        left[j] = right[j];
        right[j] = c;
      }
    }
    for (size_t j = 0; j < lanes && ok; j++) {
      uint64_t first = decrypt ? right[j] : left[j], second = decrypt ? left[j] : right[j];
      if (values->bits_out != NULL) {
        values->bits_out[start + j] = (uint32_t)((first << v) | second);
      } else {
        uint16_t *out = values->numerals_out + (start + j) * n;
        value_numerals(first, radix, out, u);
        value_numerals(second, radix, out + u, v);
      }
    }
  }
  /* No halves or PRF blocks left on the stack. */
  OPENSSL_cleanse(left, used * sizeof(left[0]));
  OPENSSL_cleanse(right, used * sizeof(right[0]));
  OPENSSL_cleanse(base, used * BLOCK);
  OPENSSL_cleanse(blocks, used * BLOCK);
  OPENSSL_cleanse(encrypted, used * BLOCK);
  return ok;
}

Ff1Context *ff1_context_of(napi_env env, napi_value value) {
  return (Ff1Context *)handle_data(env, value, &CONTEXT_TAG);
}

int ff1_crypt_radix256(Ff1Context *context, uint32_t n, const uint16_t *input, uint16_t *output, size_t count, const Ff1Tweaks *tweaks, bool decrypt) {
  uint32_t u = n / 2, v = n - u;
  if (n < 3 || n > MAX_BYTES_N) return 0;
  /* Halves of up to six bytes fit the integer path (256^6 < 2^53), as crypt routes them. */
  if (v > 6) return ff1_crypt_bytes(context, n, input, output, count, tweaks, decrypt);
  const Ff1Values values = {input, output, NULL, NULL};
  return ff1_crypt_lanes(context, 256, n, UINT64_C(1) << (8 * u), UINT64_C(1) << (8 * v), tweaks, count, decrypt, &values);
}

static napi_value ff1_crypt(napi_env env, napi_callback_info info) {
  napi_value argv[8];
  Ff1Context *context = ff1_call(env, info, 8, argv, "crypt");
  if (context == NULL) return NULL;
  uint32_t radix, n;
  if (!integer_in(env, argv[1], 2, MAX_RADIX, &radix)) return throw_range(env, "crypt: radix must be an integer from 2 to 65536");
  if (!integer_in(env, argv[2], 2, 128, &n)) return throw_range(env, "crypt: n must be an integer from 2 to 128");
  void *input_data, *output_data, *tweak_data, *ends_data = NULL;
  size_t input_length, output_length, tweak_length, ends_length = 0;
  if (!typed_array(env, argv[3], napi_uint16_array, &input_data, &input_length)) return throw_type(env, "crypt: input must be a Uint16Array");
  if (!typed_array(env, argv[4], napi_uint16_array, &output_data, &output_length)) return throw_type(env, "crypt: output must be a Uint16Array");
  if (!typed_array(env, argv[5], napi_uint8_array, &tweak_data, &tweak_length)) return throw_type(env, "crypt: tweakBytes must be a Uint8Array");
  napi_valuetype ends_type;
  if (napi_typeof(env, argv[6], &ends_type) != napi_ok) return throw_type(env, "crypt: bad tweakEnds");
  int per_value_tweaks = ends_type != napi_undefined;
  if (per_value_tweaks && !typed_array(env, argv[6], napi_uint32_array, &ends_data, &ends_length)) {
    return throw_type(env, "crypt: tweakEnds must be a Uint32Array or undefined");
  }
  bool decrypt;
  if (napi_get_value_bool(env, argv[7], &decrypt) != napi_ok) return throw_type(env, "crypt: decrypt must be a boolean");

  /* Sizes of SP 800-38G: u, v, radix^u, radix^v (b and d: ff1_crypt_lanes). */
  uint32_t u = n / 2, v = n - u;
  /* Radix 256 with halves past 64-bit integers: the byte path (n <= 128 = MAX_BYTES_N, checked above). */
  int bytes_path = radix == 256 && v > 6;
  uint64_t modulus_u = 1, modulus_v = 1;
  for (uint32_t p = 0; p < v && !bytes_path; p++) {
    /* Checked before multiplying: the product could wrap 64 bits and pass a check made after. */
    if (modulus_v > (MAX_MODULUS - 1) / radix) return throw_range(env, "crypt: radix^(n - n/2) must be below 2^53 here");
    modulus_v *= radix;
    if (p < u) modulus_u = modulus_v;
  }
  if (!bytes_path && modulus_v < MIN_DOMAIN && modulus_u * modulus_v < MIN_DOMAIN) return throw_range(env, "crypt: FF1 needs radix^n >= 10^6");

  if (input_length % n != 0) return throw_range(env, "crypt: input length must be a multiple of n");
  if (output_length != input_length) return throw_range(env, "crypt: output length must equal input length");
  size_t count = input_length / n;
  if (tweak_length > UINT32_MAX) return throw_range(env, "crypt: a tweak is limited to 2^32 - 1 bytes");
  const uint32_t *ends = (const uint32_t *)ends_data;
  if (per_value_tweaks) {
    if (ends_length != count) return throw_range(env, "crypt: tweakEnds must have one entry per value");
    uint32_t previous = 0;
    for (size_t j = 0; j < count; j++) {
      if (ends[j] < previous || ends[j] > tweak_length) return throw_range(env, "crypt: tweakEnds must rise and stay within tweakBytes");
      previous = ends[j];
    }
  }
  const uint16_t *input = (const uint16_t *)input_data;
  uint16_t *output = (uint16_t *)output_data;
  if (radix < MAX_RADIX) {
    for (size_t p = 0; p < input_length; p++) {
      if (input[p] >= radix) return throw_range(env, "crypt: a numeral is out of range for the radix");
    }
  }
  const Ff1Tweaks tweaks = {(const uint8_t *)tweak_data, tweak_length, per_value_tweaks ? ends : NULL};
  if (bytes_path) {
    if (!ff1_crypt_bytes(context, n, input, output, count, &tweaks, decrypt)) {
      napi_throw_error(env, NULL, "crypt: OpenSSL AES failed");
    }
    return NULL;
  }

  const Ff1Values values = {input, output, NULL, NULL};
  if (!ff1_crypt_lanes(context, radix, n, modulus_u, modulus_v, &tweaks, count, decrypt, &values)) {
    napi_throw_error(env, NULL, "crypt: OpenSSL AES failed");
  }
  return NULL;
}

/*
 * crypt in radix 2 with each value's n bits held in an integer (most significant first), as the
 * integer domains (dates) have them: no numeral per bit to write, read or check.
 */
static napi_value ff1_crypt_bits(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  Ff1Context *context = ff1_call(env, info, 6, argv, "cryptBits");
  if (context == NULL) return NULL;
  uint32_t n;
  /* 2^20 is the first power of two past FF1's 10^6; 32 bits fill the integers. */
  if (!integer_in(env, argv[1], 20, 32, &n)) return throw_range(env, "cryptBits: n must be an integer from 20 to 32");
  void *input_data, *output_data, *tweak_data;
  size_t input_length, output_length, tweak_length;
  if (!typed_array(env, argv[2], napi_uint32_array, &input_data, &input_length)) return throw_type(env, "cryptBits: input must be a Uint32Array");
  if (!typed_array(env, argv[3], napi_uint32_array, &output_data, &output_length)) return throw_type(env, "cryptBits: output must be a Uint32Array");
  if (!typed_array(env, argv[4], napi_uint8_array, &tweak_data, &tweak_length)) return throw_type(env, "cryptBits: tweakBytes must be a Uint8Array");
  bool decrypt;
  if (napi_get_value_bool(env, argv[5], &decrypt) != napi_ok) return throw_type(env, "cryptBits: decrypt must be a boolean");
  if (output_length != input_length) return throw_range(env, "cryptBits: output length must equal input length");
  if (tweak_length > UINT32_MAX) return throw_range(env, "cryptBits: a tweak is limited to 2^32 - 1 bytes");
  const uint32_t *input = (const uint32_t *)input_data;
  if (n < 32) {
    for (size_t j = 0; j < input_length; j++) {
      if (input[j] >> n != 0) return throw_range(env, "cryptBits: a value has more than n bits");
    }
  }
  uint32_t u = n / 2, v = n - u;
  const Ff1Tweaks tweaks = {(const uint8_t *)tweak_data, tweak_length, NULL};
  const Ff1Values values = {NULL, NULL, input, (uint32_t *)output_data};
  if (!ff1_crypt_lanes(context, 2, n, UINT64_C(1) << u, UINT64_C(1) << v, &tweaks, input_length, decrypt, &values)) {
    napi_throw_error(env, NULL, "cryptBits: OpenSSL AES failed");
  }
  return NULL;
}

int ff1_define(napi_env env, napi_value exports) {
  /* What this build can do: JavaScript routes radix-256 byte strings here only when it says so. */
  napi_value max_bytes;
  if (napi_create_uint32(env, MAX_BYTES_N, &max_bytes) != napi_ok) return 0;
  napi_property_descriptor properties[] = {
      {"createContext", NULL, create_context, NULL, NULL, NULL, napi_enumerable, NULL},
      {"crypt", NULL, ff1_crypt, NULL, NULL, NULL, napi_enumerable, NULL},
      {"cryptBits", NULL, ff1_crypt_bits, NULL, NULL, NULL, napi_enumerable, NULL},
      {"cryptDigitsInPlace", NULL, ff1_crypt_digits_in_place, NULL, NULL, NULL, napi_enumerable, NULL},
      {"maxBytes", NULL, NULL, NULL, NULL, max_bytes, napi_enumerable, NULL},
  };
  return napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties) == napi_ok;
}
